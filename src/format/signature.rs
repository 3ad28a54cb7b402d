//! Signed frames (docs/FORMAT.md section 6, tag 2). A frame's CRC and
//! digests catch accidents; a signature says who made the frame. A signed
//! frame names its key by an 8-byte id in a metadata record, and its
//! Ed25519 signature (RFC 8032) over every byte before it, CRC included,
//! follows the CRC. The decoders read a signed frame as any other and do
//! not check the signature: [`verify_frame`] does, and a
//! [`Subscriber`](crate::Subscriber) given keys calls it on every frame
//! before it looks at the payload.

use super::header::{HeaderFields, KEY_ID_LEN, SIGNATURE_LEN};
use super::{checked_whole_frame, frame_bytes, DecodeError, DecodeLimits, FrameHeader};
use crate::prelude::*;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

/// The id a signed frame names its key by: the first 8 bytes of the
/// 32-byte Ed25519 public key. It only selects among the receiver's keys
/// (the signature is checked with the whole key), so that keys can be
/// rotated: a receiver holds the old and the new key while both sign.
fn key_id(key: &VerifyingKey) -> [u8; KEY_ID_LEN] {
    let mut id = [0u8; KEY_ID_LEN];
    id.copy_from_slice(key.as_bytes().get(..KEY_ID_LEN).unwrap_or(&[0; KEY_ID_LEN]));
    id
}

/// A key id as 16 hex digits, for the messages that name it.
pub(crate) fn key_id_hex(id: &[u8; KEY_ID_LEN]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// `frame` signed by `key`: the same frame with the key's id as metadata
/// record 2, a new CRC, and the signature of it all after the CRC. A
/// signed frame is version 3. A frame already signed is signed anew.
///
/// # Errors
/// Any [`DecodeError`] of `frame`, which must be one whole frame.
///
/// # Examples
/// ```
/// use compressed_bloom::format::{sign_frame, verify_frame};
/// use compressed_bloom::ed25519_dalek::SigningKey;
/// use compressed_bloom::{encode, BloomFilter, DecodeLimits, FilterParams};
/// let key = SigningKey::from_bytes(&[7; 32]);
/// let mut f = BloomFilter::new(FilterParams::new(1 << 12, 3, 0))?;
/// f.insert(b"revoked");
/// let signed = sign_frame(&encode(&f), &key)?;
/// let header = verify_frame(&signed, &[key.verifying_key()], &DecodeLimits::default())?;
/// assert!(header.signer.is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sign_frame(frame: &[u8], key: &SigningKey) -> Result<Vec<u8>, DecodeError> {
    let (h, payload) = checked_whole_frame(frame, &DecodeLimits::unlimited())?;
    let fields = HeaderFields {
        signer: Some(key_id(&key.verifying_key())),
        ..HeaderFields::of_header(&h)
    };
    let mut out = frame_bytes(&h.params, h.n, &fields, payload);
    let signature = key.sign(&out);
    out.extend_from_slice(&signature.to_bytes());
    Ok(out)
}

/// Checks that `frame` (one whole frame) is signed by one of `keys`:
/// first what every decoder checks (header, limits, lengths, CRC), then
/// the signature, one Ed25519 verification; no payload byte is decoded.
/// Returns the frame's header.
///
/// # Errors
/// Any [`DecodeError`] of the frame; [`DecodeError::Unsigned`],
/// [`DecodeError::UnknownKey`] or [`DecodeError::BadSignature`].
pub fn verify_frame(
    frame: &[u8],
    keys: &[VerifyingKey],
    limits: &DecodeLimits,
) -> Result<FrameHeader, DecodeError> {
    let (h, _) = checked_whole_frame(frame, limits)?;
    verify_signature(frame, &h, keys)?;
    Ok(h)
}

/// The signature check of [`verify_frame`] for a frame whose other checks
/// passed ([`checked_whole_frame`] gave `h`).
pub(crate) fn verify_signature(
    frame: &[u8],
    h: &FrameHeader,
    keys: &[VerifyingKey],
) -> Result<(), DecodeError> {
    let id = h.signer.ok_or(DecodeError::Unsigned)?;
    // checked_whole_frame made the frame exactly frame_len() bytes, of
    // which the last SIGNATURE_LEN are the signature.
    let signed_len = usize::try_from(h.signed_len()).unwrap_or(usize::MAX);
    let (signed, sig) = frame
        .split_at_checked(signed_len)
        .ok_or(DecodeError::BadSignature { key_id: id })?;
    let sig: [u8; SIGNATURE_LEN] = sig
        .try_into()
        .map_err(|_| DecodeError::BadSignature { key_id: id })?;
    let sig = Signature::from_bytes(&sig);
    let mut named = keys.iter().filter(|k| key_id(k) == id).peekable();
    if named.peek().is_none() {
        return Err(DecodeError::UnknownKey { key_id: id });
    }
    if named.any(|k| k.verify_strict(signed, &sig).is_ok()) {
        Ok(())
    } else {
        Err(DecodeError::BadSignature { key_id: id })
    }
}
