//! Publisher and subscriber: ordered, identified updates, each the smaller
//! of a delta and a full frame, and a receiver that applies them in order
//! and says what it did with each.

use crate::error::*;
use crate::filter::{add_key, cb_filter, remove_key};
use crate::sign::{signing_key, verifying_keys};
use crate::{cb_limits, cb_update_id, coding_from_raw, limits_or_default};
use compressed_bloom::{
    AnyFilter, Publisher, PublisherOptions, Subscriber, SyncError, Update, UpdateKind,
};

/// What `cb_subscriber_receive` did with a frame.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum cb_receive {
    /// A full frame replaced the filter held.
    CB_RECEIVED_FULL = 0,
    /// A delta was applied to the filter held.
    CB_RECEIVED_DELTA = 1,
    /// Refused: a version already held or passed (duplicate, replay, late).
    CB_REFUSED_STALE = 2,
    /// Refused: a delta that does not apply to what is held (a gap, or
    /// nothing held yet): wait for a full frame.
    CB_REFUSED_NEED_FULL = 3,
    /// Refused: a frame of another stream than the one followed.
    CB_REFUSED_WRONG_STREAM = 4,
    /// Refused: a frame without identity, while an identified version is
    /// held.
    CB_REFUSED_UNORDERED = 5,
    /// Refused: the frame is invalid (the error code says why).
    CB_REFUSED_INVALID = 6,
    /// Refused: the subscriber takes only signed frames
    /// (`cb_subscriber_set_verifying_keys`) and this one is not signed.
    CB_REFUSED_UNSIGNED = 7,
    /// Refused: the frame is signed by a key the subscriber does not hold.
    CB_REFUSED_UNKNOWN_KEY = 8,
    /// Refused: the frame's signature does not verify with the key it
    /// names (altered, or forged).
    CB_REFUSED_BAD_SIGNATURE = 9,
}

/// A receiver of updates of any kind: it holds the latest filter, applies
/// deltas only to the version they were made from, and refuses duplicate,
/// late, foreign and invalid frames, keeping what it holds. Made by
/// `cb_subscriber_new`, freed by `cb_subscriber_free`.
///
/// Threads: `Send`, not shared: one thread at a time per handle.
pub struct cb_subscriber {
    inner: Subscriber<AnyFilter>,
}

/// Makes a subscriber into `*out` that decodes under `limits` (optional:
/// NULL for the defaults). With `follow_stream` non-zero it refuses
/// identified frames of any stream but `stream`; otherwise it follows the
/// stream of the first identified frame it takes.
///
/// # Safety
/// `limits` is NULL or readable; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_subscriber_new(
    limits: *const cb_limits,
    follow_stream: u32,
    stream: u64,
    out_subscriber: *mut *mut cb_subscriber,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL or readable (contract).
        let limits = unsafe { limits_or_default(limits) };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_subscriber, "out_subscriber")? };
        let inner = if follow_stream != 0 {
            Subscriber::following(stream, limits)
        } else {
            Subscriber::new(limits)
        };
        give(o, cb_subscriber { inner });
        Ok(())
    })
}

/// Makes the subscriber take only frames signed by one of `keys`:
/// `key_count` Ed25519 public keys of `CB_KEY_LEN` bytes each, back to
/// back (`cb_public_key` gives a secret key's). With `key_count` 0 (`keys`
/// may then be NULL) it takes unsigned frames again, as a new subscriber
/// does. The keys replace the ones it had; the filter held is kept.
///
/// To rotate the publisher's key without a refused update: give the
/// subscribers the old and the new public key, move the publisher to the
/// new secret key (`cb_publisher_set_signing_key`), then give them the
/// new key alone.
///
/// Without keys a subscriber trusts whoever can put frames in front of
/// it: CRCs and digests catch accidents, not forgeries.
///
/// Errors: `CB_ERROR_INVALID_ARGUMENT` for a key that is not an Ed25519
/// public key (the keys are then unchanged).
///
/// # Safety
/// `subscriber` is NULL or a live handle; `keys` is NULL or points to
/// `key_count` times `CB_KEY_LEN` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn cb_subscriber_set_verifying_keys(
    subscriber: *mut cb_subscriber,
    keys: *const u8,
    key_count: usize,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle used by this thread alone.
        let s = unsafe { handle_mut(subscriber, "subscriber")? };
        // SAFETY: NULL (with a count) is refused; otherwise the keys'
        // bytes are readable (contract).
        let keys = unsafe { verifying_keys(keys, key_count)? };
        s.inner.set_verifying_keys(keys);
        Ok(())
    })
}

/// Takes the next frame (`len` bytes at `src`, exactly one frame) and sets
/// `*outcome` to what it did. Returns `CB_OK` when the frame was taken
/// (`CB_RECEIVED_FULL` or `CB_RECEIVED_DELTA`); otherwise the frame was
/// refused, the filter held is unchanged, and the code says why:
/// `CB_ERROR_STALE`, `CB_ERROR_NEED_FULL`, `CB_ERROR_WRONG_STREAM`,
/// `CB_ERROR_UNORDERED`, and with verifying keys `CB_ERROR_UNSIGNED`,
/// `CB_ERROR_UNKNOWN_KEY`, `CB_ERROR_BAD_SIGNATURE` (each with the
/// matching `CB_REFUSED_*` outcome), or a decode error for an invalid
/// frame (`CB_REFUSED_INVALID`). The NULL and empty-input errors leave
/// `*outcome` unset.
///
/// A subscriber with verifying keys checks each frame's signature after
/// the checks on its header, limits and CRC, and before its order or
/// payload: a refused signature leaves the filter held and the version
/// unchanged.
///
/// A refused frame costs only the checks on its own bytes, whatever the
/// size of the filter held.
///
/// # Safety
/// `subscriber` is NULL or a live handle; `src` is NULL or `len` readable
/// bytes; `outcome` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_subscriber_receive(
    subscriber: *mut cb_subscriber,
    src: *const u8,
    len: usize,
    outcome: *mut cb_receive,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle used by this thread alone.
        let s = unsafe { handle_mut(subscriber, "subscriber")? };
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let src = unsafe { bytes(src, len, "src")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(outcome, "outcome")? };
        let (what, result) = match s.inner.receive(src) {
            Ok(UpdateKind::Full) => (cb_receive::CB_RECEIVED_FULL, Ok(())),
            Ok(UpdateKind::Delta) => (cb_receive::CB_RECEIVED_DELTA, Ok(())),
            Err(e) => {
                let msg = e.to_string();
                match e {
                    SyncError::Stale { .. } => (
                        cb_receive::CB_REFUSED_STALE,
                        Err(Fail::new(cb_error::CB_ERROR_STALE, msg)),
                    ),
                    SyncError::NeedFull { .. } => (
                        cb_receive::CB_REFUSED_NEED_FULL,
                        Err(Fail::new(cb_error::CB_ERROR_NEED_FULL, msg)),
                    ),
                    SyncError::WrongStream { .. } => (
                        cb_receive::CB_REFUSED_WRONG_STREAM,
                        Err(Fail::new(cb_error::CB_ERROR_WRONG_STREAM, msg)),
                    ),
                    SyncError::Unordered { .. } => (
                        cb_receive::CB_REFUSED_UNORDERED,
                        Err(Fail::new(cb_error::CB_ERROR_UNORDERED, msg)),
                    ),
                    SyncError::Unsigned => (
                        cb_receive::CB_REFUSED_UNSIGNED,
                        Err(Fail::new(cb_error::CB_ERROR_UNSIGNED, msg)),
                    ),
                    SyncError::UnknownKey { .. } => (
                        cb_receive::CB_REFUSED_UNKNOWN_KEY,
                        Err(Fail::new(cb_error::CB_ERROR_UNKNOWN_KEY, msg)),
                    ),
                    SyncError::BadSignature { .. } => (
                        cb_receive::CB_REFUSED_BAD_SIGNATURE,
                        Err(Fail::new(cb_error::CB_ERROR_BAD_SIGNATURE, msg)),
                    ),
                    SyncError::Decode(d) => (cb_receive::CB_REFUSED_INVALID, Err(Fail::from(d))),
                    _ => (
                        cb_receive::CB_REFUSED_INVALID,
                        Err(Fail::new(cb_error::CB_ERROR_CORRUPT, msg)),
                    ),
                }
            }
        };
        *o = what;
        result
    })
}

/// Sets `*result` to whether the key may be in the filter held.
///
/// Errors: `CB_ERROR_NEED_FULL` while no full frame has been taken.
///
/// # Safety
/// `subscriber` is NULL or a live handle; `key` is NULL or `len` readable
/// bytes; `result` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_subscriber_contains(
    subscriber: *const cb_subscriber,
    key: *const u8,
    len: usize,
    result: *mut bool,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let s = unsafe { handle(subscriber, "subscriber")? };
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let key = unsafe { bytes(key, len, "key")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let r = unsafe { out(result, "result")? };
        let f = held(s)?;
        *r = f.contains(key);
        Ok(())
    })
}

fn held(s: &cb_subscriber) -> Result<&AnyFilter, Fail> {
    s.inner.filter().ok_or_else(|| {
        Fail::new(
            cb_error::CB_ERROR_NEED_FULL,
            "the subscriber holds no filter yet: no full frame has been taken",
        )
    })
}

/// Sets `*has_identity` to whether the version held came with an update
/// identity, and then `*identity` to it (unchanged otherwise).
///
/// Errors: `CB_ERROR_NEED_FULL` while no full frame has been taken.
///
/// # Safety
/// `subscriber` is NULL or a live handle; `has_identity` and `identity`
/// are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_subscriber_version(
    subscriber: *const cb_subscriber,
    has_identity: *mut bool,
    identity: *mut cb_update_id,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let s = unsafe { handle(subscriber, "subscriber")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let (h, id) = unsafe {
            (
                out(has_identity, "has_identity")?,
                out(identity, "identity")?,
            )
        };
        held(s)?;
        let version = s.inner.version();
        *h = version.is_some();
        if let Some(v) = version {
            *id = v.into();
        }
        Ok(())
    })
}

/// Makes a copy of the filter held into `*out` (to encode it, inspect it,
/// or keep it past the next update).
///
/// Errors: `CB_ERROR_NEED_FULL` while no full frame has been taken.
///
/// # Safety
/// `subscriber` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_subscriber_filter(
    subscriber: *const cb_subscriber,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let s = unsafe { handle(subscriber, "subscriber")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        give(o, cb_filter::new(held(s)?.clone()));
        Ok(())
    })
}

/// Frees a subscriber. NULL is accepted and does nothing.
///
/// # Safety
/// `subscriber` is NULL or a live handle, not used again.
#[no_mangle]
pub unsafe extern "C" fn cb_subscriber_free(subscriber: *mut cb_subscriber) -> cb_error {
    // SAFETY: NULL or a handle this library made, freed once (contract).
    unsafe { free(subscriber) }
}

/// How a publisher numbers, paces and codes its updates.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cb_publisher_options {
    /// The stream its updates carry (a subscriber can follow one).
    pub stream: u64,
    /// The epoch of its first update, if `epoch_from_clock` is 0. A
    /// publisher that restarts without its state must use a larger epoch
    /// than before, or subscribers refuse its frames as stale.
    pub epoch: u64,
    /// Non-zero: take the epoch from the clock (microseconds since the
    /// Unix epoch), so that a restarted publisher supersedes its past.
    pub epoch_from_clock: u32,
    /// Every `full_every`-th update is a full frame (1: only full frames);
    /// the others are deltas where smaller.
    pub full_every: u32,
    /// The coding of its full frames (a `cb_coding`).
    pub coding: u32,
}

/// Fills `*options` with the defaults: stream 0, the epoch from the
/// clock, a full frame at least every 16 updates, `CB_CODING_AUTO`.
///
/// # Safety
/// `options` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_publisher_options_default(
    options: *mut cb_publisher_options,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(options, "options")? };
        let d = PublisherOptions::default();
        *o = cb_publisher_options {
            stream: d.stream,
            epoch: 0,
            epoch_from_clock: 1,
            full_every: d.full_every,
            coding: 0,
        };
        Ok(())
    })
}

/// The sending side: holds the filter, and makes each update the smaller
/// of a delta against the last version published and a full frame,
/// numbered by an update identity. Made by `cb_publisher_new`, freed by
/// `cb_publisher_free`.
///
/// Threads: `Send`, not shared: one thread at a time per handle.
pub struct cb_publisher {
    inner: Publisher<AnyFilter>,
    /// An update published but not yet delivered (the caller's buffer was
    /// too small): the next `cb_publisher_publish` delivers it.
    pending: Option<Update>,
}

/// Makes a publisher into `*out` of a copy of `filter`, with `options`
/// (optional: NULL for `cb_publisher_options_default`). Any kind: sparse
/// and ribbon filters take no keys once built, so their publisher only
/// sends the filter it was given.
///
/// # Safety
/// `filter` is NULL or a live handle; `options` is NULL or readable; `out`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_publisher_new(
    filter: *const cb_filter,
    options: *const cb_publisher_options,
    out_publisher: *mut *mut cb_publisher,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let f = unsafe { handle(filter, "filter")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_publisher, "out_publisher")? };
        // SAFETY: NULL or readable plain numbers (contract).
        let opts = match unsafe { options.as_ref() } {
            None => PublisherOptions::default(),
            Some(opts) => {
                if opts.full_every == 0 {
                    return Err(Fail::invalid("full_every = 0: at least 1"));
                }
                PublisherOptions {
                    stream: opts.stream,
                    epoch: (opts.epoch_from_clock == 0).then_some(opts.epoch),
                    full_every: opts.full_every,
                    coding: coding_from_raw(opts.coding)?,
                    ..PublisherOptions::default()
                }
            }
        };
        give(
            o,
            cb_publisher {
                inner: Publisher::new(f.inner.clone(), opts),
                pending: None,
            },
        );
        Ok(())
    })
}

/// Signs the updates from the next one published on with the secret key
/// `secret` (`CB_KEY_LEN` bytes), or, with `secret` NULL, sends them
/// unsigned (as a new publisher does). The publisher keeps its own copy
/// of the key (wiped when replaced or freed); the caller's may be wiped
/// after the call. An update left pending by `CB_ERROR_DST_TOO_SMALL` is
/// delivered as it was made.
///
/// A signed update is up to `CB_SIGN_OVERHEAD` bytes longer: a buffer of
/// `cb_encode_bound`'s size plus that holds any full frame. Keys are the
/// caller's to make: 32 bytes from the operating system's random source
/// (see `cb_public_key`). To rotate keys, see
/// `cb_subscriber_set_verifying_keys`.
///
/// # Safety
/// `publisher` is NULL or a live handle; `secret` is NULL or `CB_KEY_LEN`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn cb_publisher_set_signing_key(
    publisher: *mut cb_publisher,
    secret: *const u8,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle used by this thread alone.
        let p = unsafe { handle_mut(publisher, "publisher")? };
        let key = if secret.is_null() {
            None
        } else {
            // SAFETY: not NULL: CB_KEY_LEN readable bytes (contract).
            Some(unsafe { signing_key(secret, "secret")? })
        };
        p.inner.set_signing_key(key);
        Ok(())
    })
}

/// The publisher's filter, for a change.
fn filter_of(p: &mut cb_publisher) -> Result<&mut AnyFilter, Fail> {
    p.inner
        .filter_mut()
        .ok_or_else(|| Fail::new(cb_error::CB_ERROR_INTERNAL, "the publisher holds no filter"))
}

/// Adds a key to the publisher's filter (as `cb_filter_add`); the next
/// update carries it.
///
/// # Safety
/// `publisher` is NULL or a live handle; `key` is NULL or `len` readable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn cb_publisher_add(
    publisher: *mut cb_publisher,
    key: *const u8,
    len: usize,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle used by this thread alone.
        let p = unsafe { handle_mut(publisher, "publisher")? };
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let key = unsafe { bytes(key, len, "key")? };
        add_key(filter_of(p)?, key)
    })
}

/// Removes a key from the publisher's counting filter (as
/// `cb_filter_remove`; `removed` is optional).
///
/// # Safety
/// `publisher` is NULL or a live handle; `key` is NULL or `len` readable
/// bytes; `removed` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_publisher_remove(
    publisher: *mut cb_publisher,
    key: *const u8,
    len: usize,
    removed: *mut bool,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle used by this thread alone.
        let p = unsafe { handle_mut(publisher, "publisher")? };
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let key = unsafe { bytes(key, len, "key")? };
        let was = remove_key(filter_of(p)?, key)?;
        // SAFETY: NULL (optional) or writable (contract).
        if let Some(r) = unsafe { removed.as_mut() } {
            *r = was;
        }
        Ok(())
    })
}

/// Publishes the next update into `dst` (`capacity` bytes): sets
/// `*written` to its length, `*is_delta` to whether it is a delta, and
/// `*identity` (optional: may be NULL) to the version it makes.
///
/// If the buffer is too small, returns `CB_ERROR_DST_TOO_SMALL` with
/// `*written` the length needed; the update stays pending, and the next
/// call delivers that same update (it does not publish another). A
/// buffer of `cb_encode_bound`'s size for the filter always suffices for
/// a full frame (plus `CB_SIGN_OVERHEAD` with a signing key).
///
/// # Safety
/// `publisher` is NULL or a live handle; `dst` is NULL or `capacity`
/// writable bytes; `written` and `is_delta` are NULL or writable;
/// `identity` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_publisher_publish(
    publisher: *mut cb_publisher,
    dst: *mut u8,
    capacity: usize,
    written: *mut usize,
    is_delta: *mut bool,
    identity: *mut cb_update_id,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle used by this thread alone.
        let p = unsafe { handle_mut(publisher, "publisher")? };
        // SAFETY: NULL is refused; `capacity` writable bytes (contract).
        let dst = unsafe { buffer(dst, capacity, "dst")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let (w, d) = unsafe { (out(written, "written")?, out(is_delta, "is_delta")?) };
        let update = match p.pending.take() {
            Some(u) => u,
            None => p.inner.publish(),
        };
        *w = update.frame.len();
        match dst.get_mut(..update.frame.len()) {
            Some(slot) => {
                slot.copy_from_slice(&update.frame);
                *d = update.kind == UpdateKind::Delta;
                // SAFETY: NULL (optional) or writable (contract).
                if let Some(id) = unsafe { identity.as_mut() } {
                    *id = update.id.into();
                }
                Ok(())
            }
            None => {
                let msg = format!(
                    "the update is {} bytes, the buffer {} bytes; it stays pending",
                    update.frame.len(),
                    dst.len()
                );
                p.pending = Some(update);
                Err(Fail::new(cb_error::CB_ERROR_DST_TOO_SMALL, msg))
            }
        }
    })
}

/// Frees a publisher. NULL is accepted and does nothing.
///
/// # Safety
/// `publisher` is NULL or a live handle, not used again.
#[no_mangle]
pub unsafe extern "C" fn cb_publisher_free(publisher: *mut cb_publisher) -> cb_error {
    // SAFETY: NULL or a handle this library made, freed once (contract).
    unsafe { free(publisher) }
}
