//! Signed frames (docs/FORMAT.md section 6, tag 2): signing a frame,
//! verifying one against the keys a receiver trusts, and the keys of the
//! publisher and subscriber. Keys are raw Ed25519 keys (RFC 8032): a
//! 32-byte secret key (the RFC's seed) and a 32-byte public key. The
//! library makes no keys: a secret is 32 bytes from the operating
//! system's random source (`getrandom(2)`, `/dev/urandom`,
//! `BCryptGenRandom`), kept secret by the caller.

use crate::codec::{deliver, frame_info};
use crate::error::*;
use crate::{cb_frame_info, cb_limits, limits_or_default};
use compressed_bloom::ed25519_dalek::{SigningKey, VerifyingKey};
use compressed_bloom::format::{sign_frame, verify_frame};

/// Bytes of an Ed25519 secret key, and of a public key.
pub const CB_KEY_LEN: usize = 32;

/// Bytes of a key id: the first 8 bytes of the signer's public key, as a
/// signed frame names its key (`cb_frame_info.signer`).
pub const CB_KEY_ID_LEN: usize = 8;

/// The most bytes signing adds to a frame: a buffer of the frame's length
/// plus `CB_SIGN_OVERHEAD` always holds it signed. That is the 64-byte
/// signature, the 10-byte metadata record that names the key (tag, length,
/// key id), the metadata length's varint where the frame had no records,
/// and the kind byte a version 1 or 2 frame gains as version 3. A frame
/// already signed keeps its length.
pub const CB_SIGN_OVERHEAD: usize = 76;

/// The signing key of the `CB_KEY_LEN` bytes at `secret`.
///
/// # Safety
/// `secret` is NULL or points to `CB_KEY_LEN` readable bytes.
pub(crate) unsafe fn signing_key(secret: *const u8, what: &str) -> Result<SigningKey, Fail> {
    // SAFETY: NULL is refused; otherwise CB_KEY_LEN readable bytes
    // (contract).
    let b = unsafe { bytes(secret, CB_KEY_LEN, what)? };
    let b: &[u8; CB_KEY_LEN] = b
        .try_into()
        .map_err(|_| Fail::invalid(format!("`{what}` is not {CB_KEY_LEN} bytes")))?;
    Ok(SigningKey::from_bytes(b))
}

/// The `count` public keys at `keys`, `CB_KEY_LEN` bytes each, back to
/// back; each must be an Ed25519 public key. NULL is taken for no keys
/// when `count` is 0.
///
/// # Safety
/// `keys` is NULL or points to `count * CB_KEY_LEN` readable bytes.
pub(crate) unsafe fn verifying_keys(
    keys: *const u8,
    count: usize,
) -> Result<Vec<VerifyingKey>, Fail> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let len = count
        .checked_mul(CB_KEY_LEN)
        .ok_or_else(|| Fail::invalid(format!("{count} keys are more than any buffer holds")))?;
    // SAFETY: NULL is refused; otherwise `count * CB_KEY_LEN` readable
    // bytes (contract).
    let all = unsafe { bytes(keys, len, "keys")? };
    all.chunks_exact(CB_KEY_LEN)
        .enumerate()
        .map(|(i, k)| {
            let k: &[u8; CB_KEY_LEN] = k
                .try_into()
                .map_err(|_| Fail::invalid(format!("key {i} is not {CB_KEY_LEN} bytes")))?;
            VerifyingKey::from_bytes(k)
                .map_err(|_| Fail::invalid(format!("key {i} is not an Ed25519 public key")))
        })
        .collect()
}

/// Writes the public key of the secret key `secret` (`CB_KEY_LEN` bytes)
/// into `public_out` (`CB_KEY_LEN` bytes): what receivers give
/// `cb_verify_frame` and `cb_subscriber_set_verifying_keys`. Its first
/// `CB_KEY_ID_LEN` bytes are the key id that frames signed with `secret`
/// carry.
///
/// Keys are the caller's to make: a secret key is `CB_KEY_LEN` bytes from
/// the operating system's random source (`getrandom(2)` or
/// `/dev/urandom`; `BCryptGenRandom` on Windows), never from `rand()` or
/// a clock. Every 32-byte string is a valid secret key.
///
/// # Safety
/// `secret` is NULL or `CB_KEY_LEN` readable bytes; `public_out` is NULL
/// or `CB_KEY_LEN` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn cb_public_key(secret: *const u8, public_out: *mut u8) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; CB_KEY_LEN readable bytes (contract).
        let key = unsafe { signing_key(secret, "secret")? };
        // SAFETY: NULL is refused; CB_KEY_LEN writable bytes (contract).
        let o = unsafe { buffer(public_out, CB_KEY_LEN, "public_out")? };
        o.copy_from_slice(key.verifying_key().as_bytes());
        Ok(())
    })
}

/// Signs one whole frame (`len` bytes at `frame`, full or delta, of any
/// kind) with the secret key `secret` (`CB_KEY_LEN` bytes), into `dst`
/// (`capacity` bytes), and sets `*written` to the signed frame's length.
/// The signed frame is the same frame as version 3 with the key's id in
/// its header and the Ed25519 signature (RFC 8032, deterministic: the
/// same frame and key give the same bytes) after its CRC. Every decoder
/// of this library reads it as the unsigned frame; `cb_verify_frame` and
/// a subscriber with keys check the signature. A frame already signed is
/// signed anew.
///
/// The signed frame is at most `len + CB_SIGN_OVERHEAD` bytes.
///
/// Errors: `CB_ERROR_DST_TOO_SMALL` (then `*written` is the length needed
/// and nothing is written); any decode error of `frame`, which must be one
/// whole valid frame (checked without limits: it is the caller's own).
///
/// # Safety
/// `frame` is NULL or `len` readable bytes; `secret` is NULL or
/// `CB_KEY_LEN` readable bytes; `dst` is NULL or `capacity` writable
/// bytes that do not overlap `frame`; `written` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_sign_frame(
    frame: *const u8,
    len: usize,
    secret: *const u8,
    dst: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> cb_error {
    guard(|| {
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let frame = unsafe { bytes(frame, len, "frame")? };
        // SAFETY: NULL is refused; CB_KEY_LEN readable bytes (contract).
        let key = unsafe { signing_key(secret, "secret")? };
        // SAFETY: NULL is refused; `capacity` writable bytes, apart from
        // `frame` (contract).
        let dst = unsafe { buffer(dst, capacity, "dst")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let w = unsafe { out(written, "written")? };
        let signed = sign_frame(frame, &key)?;
        deliver(&signed, dst, w)
    })
}

/// Checks that `frame` (`len` bytes, one whole frame) is signed by one of
/// `keys`: `key_count` public keys of `CB_KEY_LEN` bytes each, back to
/// back (`uint8_t keys[N][CB_KEY_LEN]` passed as `&keys[0][0]`; NULL when
/// `key_count` is 0). First come the checks every decoder makes (header,
/// `limits`, length, CRC), then the signature: the frame must name a key
/// (metadata tag 2), one of `keys` must have that id, and the signature
/// must verify with it (RFC 8032, strictly: no small-order keys, `S`
/// below the group order). No payload byte is decoded. On success fills
/// `*info` as `cb_inspect` does, `has_signer` set.
///
/// `limits` is optional (NULL: `cb_limits_default`); `info` is optional
/// (NULL: not filled).
///
/// Errors: `CB_ERROR_UNSIGNED` (the frame is not signed),
/// `CB_ERROR_UNKNOWN_KEY` (signed by a key not among `keys`),
/// `CB_ERROR_BAD_SIGNATURE` (altered after signing, or forged); the
/// message names the key id. `CB_ERROR_INVALID_ARGUMENT` for a key that
/// is not an Ed25519 public key; any decode error of the frame.
///
/// # Safety
/// `frame` is NULL or `len` readable bytes; `keys` is NULL or
/// `key_count * CB_KEY_LEN` readable bytes; `limits` is NULL or readable;
/// `info` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_verify_frame(
    frame: *const u8,
    len: usize,
    keys: *const u8,
    key_count: usize,
    limits: *const cb_limits,
    info: *mut cb_frame_info,
) -> cb_error {
    guard(|| {
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let frame = unsafe { bytes(frame, len, "frame")? };
        // SAFETY: NULL (with a count) is refused; otherwise the keys'
        // bytes are readable (contract).
        let keys = unsafe { verifying_keys(keys, key_count)? };
        // SAFETY: NULL or readable (contract).
        let limits = unsafe { limits_or_default(limits) };
        let h = verify_frame(frame, &keys, &limits)?;
        // SAFETY: NULL (optional) or writable (contract).
        if let Some(o) = unsafe { info.as_mut() } {
            *o = frame_info(&h);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use compressed_bloom::kinds::squid::SquidDigest;
    use compressed_bloom::{BloomFilter, Coding, FilterParams, Kind, UpdateId};

    /// The overhead is the most signing adds: to a version-1 frame without
    /// records (kind byte, metadata length, record, signature), and to a
    /// Squid digest's frame (its records already have a two-byte length).
    #[test]
    fn signing_adds_at_most_the_overhead() {
        let key = SigningKey::from_bytes(&[3; 32]);
        let mut f = BloomFilter::new(FilterParams::new(4000, 3, 1)).unwrap();
        f.insert(b"a");
        let id = UpdateId {
            stream: 1,
            epoch: 2,
            seq: 3,
        };
        let v1 = f.encode_frame(Coding::Adaptive, None);
        assert_eq!(v1[2], 1);
        let v3 = f.encode_frame(Coding::Raw, Some(id));
        let squid = SquidDigest::new(100, 5)
            .unwrap()
            .encode_frame(Coding::Raw, None);
        let grown: Vec<usize> = [v1, v3, squid]
            .iter()
            .map(|frame| sign_frame(frame, &key).unwrap().len() - frame.len())
            .collect();
        assert_eq!(
            grown,
            [CB_SIGN_OVERHEAD, CB_SIGN_OVERHEAD - 1, CB_SIGN_OVERHEAD - 2]
        );
    }
}
