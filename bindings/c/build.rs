//! Gives the shared library a soname on Linux (libcompressed_bloom.so.0,
//! the major version: 0 while the C API may still change), so that
//! programs linked against it find the installed one by that name.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcompressed_bloom.so.0");
    }
}
