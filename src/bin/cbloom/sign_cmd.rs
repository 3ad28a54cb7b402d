//! Signed frames on the command line: `cbloom keygen` makes an Ed25519
//! key pair, `--sign KEY` signs what a command writes, and `--verify PUB`
//! (on every command that reads frames, with the limits) refuses what the
//! given keys did not sign (docs/FORMAT.md section 6, tag 2).
//!
//! Key files are text: 64 hex digits and a newline, the 32-byte secret in
//! `NAME` (mode 0600) and the 32-byte public key in `NAME.pub`.

use crate::files::write_all;
use crate::CliResult;
use clap::Args;
use compressed_bloom::ed25519_dalek::{SigningKey, VerifyingKey};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct KeygenArgs {
    /// Where to write the signing key; the public key goes to OUTPUT.pub.
    #[arg(short, long)]
    output: PathBuf,
}

/// `cbloom keygen -o NAME`.
pub(crate) fn keygen(a: &KeygenArgs) -> CliResult {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| format!("no random source for the key: {e}"))?;
    let key = SigningKey::from_bytes(&secret);
    let public = key.verifying_key();
    let pub_path = with_pub(&a.output);
    write_secret(&a.output, &hex(&secret))?;
    write_all(
        &pub_path,
        format!("{}\n", hex(public.as_bytes())).as_bytes(),
    )?;
    outln!(
        "key {} written to {} (secret, mode 0600) and {} (public)",
        hex(&key_id(&public)),
        a.output.display(),
        pub_path.display()
    );
    Ok(())
}

/// The secret, in a file only its owner may read, created so from the
/// start (never readable by others, even for an instant).
fn write_secret(path: &Path, text: &str) -> CliResult {
    use std::io::Write as _;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts
        .open(path)
        .map_err(|e| format!("{}: {e} (keygen does not overwrite a key)", path.display()))?;
    writeln!(f, "{text}")?;
    f.sync_all()?;
    Ok(())
}

fn with_pub(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".pub");
    PathBuf::from(p)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A key id: the first 8 bytes of the public key (FORMAT.md section 6).
pub(crate) fn key_id(key: &VerifyingKey) -> [u8; 8] {
    let mut id = [0u8; 8];
    id.copy_from_slice(&key.as_bytes()[..8]);
    id
}

/// 32 bytes from a key file of 64 hex digits.
fn read_key_bytes(path: &Path) -> CliResult<[u8; 32]> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let t = text.trim();
    let bad = || format!("{}: a key file holds 64 hex digits", path.display());
    if t.len() != 64 || !t.is_ascii() {
        return Err(bad().into());
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

#[derive(Args, Clone, Default)]
pub(crate) struct SignArgs {
    /// Sign the output with this signing key (from `cbloom keygen`).
    #[arg(long, value_name = "KEYFILE")]
    sign: Option<PathBuf>,
}

impl SignArgs {
    /// `frame`, signed if `--sign` was given.
    pub(crate) fn apply(&self, frame: Vec<u8>) -> CliResult<Vec<u8>> {
        let Some(path) = &self.sign else {
            return Ok(frame);
        };
        let key = SigningKey::from_bytes(&read_key_bytes(path)?);
        Ok(compressed_bloom::format::sign_frame(&frame, &key)?)
    }
}

/// The public keys of `--verify`.
pub(crate) fn verifying_keys(paths: &[PathBuf]) -> CliResult<Vec<VerifyingKey>> {
    paths
        .iter()
        .map(|p| {
            VerifyingKey::from_bytes(&read_key_bytes(p)?)
                .map_err(|e| format!("{}: not an Ed25519 public key: {e}", p.display()).into())
        })
        .collect()
}
