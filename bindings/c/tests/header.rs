//! The committed header is the one cbindgen generates from the source:
//! a change to the API that was not regenerated fails here (and in CI).
//! `CB_BLESS_HEADER=1` writes the fresh header instead.

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut fresh = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen parses the crate")
        .write(&mut fresh);
    let path = dir.join("include/compressed_bloom.h");
    if std::env::var_os("CB_BLESS_HEADER").is_some() {
        std::fs::write(&path, &fresh).expect("write the header");
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/compressed_bloom.h differs from the header cbindgen generates: run \
         CB_BLESS_HEADER=1 cargo test -p compressed_bloom_c --test header and commit it"
    );
}
