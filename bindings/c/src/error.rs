//! Error codes, the thread-local last error, the panic barrier, and the
//! checked conversions of C pointers into Rust references.

use compressed_bloom::kinds::squid::SquidError;
use compressed_bloom::{DecodeError, FilterError};
use core::ffi::c_char;
use std::cell::RefCell;
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a function did: `CB_OK`, or why it failed. `cb_error_name` names
/// a code; `cb_last_error_message` gives the details of the last failure
/// on the calling thread.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum cb_error {
    /// Success.
    CB_OK = 0,
    /// A required pointer argument was NULL.
    CB_ERROR_NULL_POINTER = 1,
    /// A length was zero where bytes are required (a frame, a key).
    CB_ERROR_EMPTY_INPUT = 2,
    /// An argument is out of range: m or k, a rate outside (0, 1), a value
    /// that is not one of the enum's, a coding the filter's kind lacks.
    CB_ERROR_INVALID_ARGUMENT = 3,
    /// The output buffer is too small; `*written` holds the size needed.
    CB_ERROR_DST_TOO_SMALL = 4,
    /// The input ends before the frame does (a partial read: wait for the
    /// rest, or ask the sender again).
    CB_ERROR_TRUNCATED = 5,
    /// The frame is corrupt: bad magic, checksum, field, payload, or
    /// trailing bytes. Retrying the same bytes will not help.
    CB_ERROR_CORRUPT = 6,
    /// The frame uses a format version, filter type, hash scheme, kind or
    /// metadata this library does not read, or that the limits exclude.
    CB_ERROR_UNSUPPORTED = 7,
    /// The frame declares more than the decode limits allow; nothing was
    /// allocated.
    CB_ERROR_LIMIT_EXCEEDED = 8,
    /// A frame or filter of another kind than the call needs, or an
    /// operation the filter's kind lacks (remove on a non-counting filter).
    CB_ERROR_WRONG_KIND = 9,
    /// A delta frame where a full frame was needed, or the reverse.
    CB_ERROR_WRONG_FRAME_TYPE = 10,
    /// A delta made from another filter (its base digest or parameters
    /// differ): a full frame is needed.
    CB_ERROR_WRONG_BASE = 11,
    /// No delta can describe the change (other parameters, a scalable
    /// filter that did not grow from the old one): send a full frame.
    CB_ERROR_NO_DELTA = 12,
    /// Subscriber: a version it already holds or has passed (a duplicate,
    /// a replay, a late frame). Nothing to do.
    CB_ERROR_STALE = 13,
    /// Subscriber: a delta that does not apply to what it holds (an update
    /// was missed, or nothing was received yet). Wait for a full frame.
    CB_ERROR_NEED_FULL = 14,
    /// Subscriber: a frame of another stream than the one it follows.
    CB_ERROR_WRONG_STREAM = 15,
    /// Subscriber: a frame without an update identity while it holds an
    /// identified version, which it could roll back.
    CB_ERROR_UNORDERED = 16,
    /// No plan meets the target, or the planned filter cannot be built (a
    /// scalable filter that cannot open another layer, say).
    CB_ERROR_INFEASIBLE = 17,
    /// The memory for a filter could not be reserved.
    CB_ERROR_OUT_OF_MEMORY = 18,
    /// A bug in the library (a panic, caught at the boundary). The
    /// handles the call was given may hold any valid state: free them.
    CB_ERROR_INTERNAL = 19,
    /// Only signed frames are taken (`cb_verify_frame`, a subscriber with
    /// verifying keys), and this one is not signed.
    CB_ERROR_UNSIGNED = 20,
    /// The frame is signed by a key whose id matches none of the
    /// receiver's keys (the message names the id): not the publisher it
    /// trusts, or a new key it was not given yet.
    CB_ERROR_UNKNOWN_KEY = 21,
    /// The frame's signature does not verify with the key it names (the
    /// message names the id): it was altered after signing, or forged.
    CB_ERROR_BAD_SIGNATURE = 22,
}

/// Every code, in value order (for `cb_error_name`).
const ALL: [(cb_error, &str); 23] = [
    (cb_error::CB_OK, "CB_OK\0"),
    (cb_error::CB_ERROR_NULL_POINTER, "CB_ERROR_NULL_POINTER\0"),
    (cb_error::CB_ERROR_EMPTY_INPUT, "CB_ERROR_EMPTY_INPUT\0"),
    (
        cb_error::CB_ERROR_INVALID_ARGUMENT,
        "CB_ERROR_INVALID_ARGUMENT\0",
    ),
    (cb_error::CB_ERROR_DST_TOO_SMALL, "CB_ERROR_DST_TOO_SMALL\0"),
    (cb_error::CB_ERROR_TRUNCATED, "CB_ERROR_TRUNCATED\0"),
    (cb_error::CB_ERROR_CORRUPT, "CB_ERROR_CORRUPT\0"),
    (cb_error::CB_ERROR_UNSUPPORTED, "CB_ERROR_UNSUPPORTED\0"),
    (
        cb_error::CB_ERROR_LIMIT_EXCEEDED,
        "CB_ERROR_LIMIT_EXCEEDED\0",
    ),
    (cb_error::CB_ERROR_WRONG_KIND, "CB_ERROR_WRONG_KIND\0"),
    (
        cb_error::CB_ERROR_WRONG_FRAME_TYPE,
        "CB_ERROR_WRONG_FRAME_TYPE\0",
    ),
    (cb_error::CB_ERROR_WRONG_BASE, "CB_ERROR_WRONG_BASE\0"),
    (cb_error::CB_ERROR_NO_DELTA, "CB_ERROR_NO_DELTA\0"),
    (cb_error::CB_ERROR_STALE, "CB_ERROR_STALE\0"),
    (cb_error::CB_ERROR_NEED_FULL, "CB_ERROR_NEED_FULL\0"),
    (cb_error::CB_ERROR_WRONG_STREAM, "CB_ERROR_WRONG_STREAM\0"),
    (cb_error::CB_ERROR_UNORDERED, "CB_ERROR_UNORDERED\0"),
    (cb_error::CB_ERROR_INFEASIBLE, "CB_ERROR_INFEASIBLE\0"),
    (cb_error::CB_ERROR_OUT_OF_MEMORY, "CB_ERROR_OUT_OF_MEMORY\0"),
    (cb_error::CB_ERROR_INTERNAL, "CB_ERROR_INTERNAL\0"),
    (cb_error::CB_ERROR_UNSIGNED, "CB_ERROR_UNSIGNED\0"),
    (cb_error::CB_ERROR_UNKNOWN_KEY, "CB_ERROR_UNKNOWN_KEY\0"),
    (cb_error::CB_ERROR_BAD_SIGNATURE, "CB_ERROR_BAD_SIGNATURE\0"),
];

/// The number of error codes: codes are 0 to `CB_ERROR_COUNT - 1`.
pub const CB_ERROR_COUNT: i32 = 23;

/// The name of an error code ("CB_ERROR_TRUNCATED"), a static string;
/// "CB_ERROR_UNKNOWN" for a value that is not a code. Takes an int, not a
/// `cb_error`, so that any value can be passed.
#[no_mangle]
pub extern "C" fn cb_error_name(code: i32) -> *const c_char {
    let name = usize::try_from(code)
        .ok()
        .and_then(|i| ALL.get(i))
        .map_or("CB_ERROR_UNKNOWN\0", |&(_, name)| name);
    name.as_ptr().cast()
}

/// A failure on its way to C: the code, the message for the last-error
/// slot, and the byte offset in the input where one is known.
#[derive(Debug)]
pub(crate) struct Fail {
    pub(crate) code: cb_error,
    pub(crate) msg: String,
    pub(crate) offset: Option<u64>,
}

impl Fail {
    pub(crate) fn new(code: cb_error, msg: impl Into<String>) -> Fail {
        Fail {
            code,
            msg: msg.into(),
            offset: None,
        }
    }

    pub(crate) fn null(what: &str) -> Fail {
        Fail::new(cb_error::CB_ERROR_NULL_POINTER, format!("`{what}` is NULL"))
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Fail {
        Fail::new(cb_error::CB_ERROR_INVALID_ARGUMENT, msg)
    }

    /// Prefixes the message with where the failure happened.
    pub(crate) fn context(mut self, what: &str) -> Fail {
        self.msg = format!("{what}: {}", self.msg);
        self
    }
}

impl From<DecodeError> for Fail {
    fn from(e: DecodeError) -> Fail {
        use cb_error::*;
        let code = match &e {
            DecodeError::Truncated { .. } => CB_ERROR_TRUNCATED,
            DecodeError::UnsupportedVersion { .. }
            | DecodeError::UnknownFilterType { .. }
            | DecodeError::UnknownHashScheme { .. }
            | DecodeError::UnsupportedKind { .. }
            | DecodeError::UnknownMetadata { .. } => CB_ERROR_UNSUPPORTED,
            DecodeError::LimitExceeded { .. } => CB_ERROR_LIMIT_EXCEEDED,
            DecodeError::WrongKind { .. } | DecodeError::NotSquid => CB_ERROR_WRONG_KIND,
            DecodeError::WrongFrameType { .. } => CB_ERROR_WRONG_FRAME_TYPE,
            DecodeError::ParamsMismatch { .. } | DecodeError::WrongBase { .. } => {
                CB_ERROR_WRONG_BASE
            }
            DecodeError::Unsigned => CB_ERROR_UNSIGNED,
            DecodeError::UnknownKey { .. } => CB_ERROR_UNKNOWN_KEY,
            DecodeError::BadSignature { .. } => CB_ERROR_BAD_SIGNATURE,
            _ => CB_ERROR_CORRUPT,
        };
        Fail {
            code,
            offset: decode_offset(&e),
            msg: e.to_string(),
        }
    }
}

/// The byte of the frame a decode error is about, where the error says:
/// the end of the bytes for a truncation, the field for a header error,
/// the payload's first byte for a payload error.
fn decode_offset(e: &DecodeError) -> Option<u64> {
    let at = match e {
        DecodeError::Truncated { available, .. } => return Some(*available),
        DecodeError::BadMagic { .. } => 0,
        DecodeError::UnsupportedVersion { .. } => 2,
        DecodeError::UnknownFilterType { .. } => 3,
        DecodeError::UnknownMetadata { offset, .. }
        | DecodeError::ReservedBits { offset, .. }
        | DecodeError::BadVarint { offset, .. }
        | DecodeError::InvalidField { offset, .. }
        | DecodeError::Payload { offset, .. }
        | DecodeError::Sparse { offset, .. }
        | DecodeError::Ribbon { offset, .. }
        | DecodeError::Scalable { offset, .. }
        | DecodeError::Counting { offset, .. }
        | DecodeError::Squid { offset, .. } => *offset,
        DecodeError::TrailingBytes { offset, .. } => return Some(*offset),
        _ => return None,
    };
    Some(at as u64)
}

impl From<FilterError> for Fail {
    fn from(e: FilterError) -> Fail {
        let code = match e {
            FilterError::OutOfMemory { .. } => cb_error::CB_ERROR_OUT_OF_MEMORY,
            _ => cb_error::CB_ERROR_INVALID_ARGUMENT,
        };
        Fail::new(code, e.to_string())
    }
}

impl From<SquidError> for Fail {
    fn from(e: SquidError) -> Fail {
        let code = match &e {
            SquidError::TooShort { .. } => cb_error::CB_ERROR_TRUNCATED,
            SquidError::TooNew { .. } => cb_error::CB_ERROR_UNSUPPORTED,
            SquidError::TooLarge { .. } => cb_error::CB_ERROR_LIMIT_EXCEEDED,
            SquidError::Filter(FilterError::OutOfMemory { .. }) => cb_error::CB_ERROR_OUT_OF_MEMORY,
            _ => cb_error::CB_ERROR_CORRUPT,
        };
        let offset = matches!(e, SquidError::TooShort { len } if len > 0).then_some(0);
        Fail {
            code,
            msg: e.to_string(),
            offset,
        }
    }
}

/// The last failure on this thread: its message (NUL-terminated, so that
/// a pointer to it can be handed to C) and byte offset.
struct LastError {
    msg: CString,
    offset: Option<u64>,
}

thread_local! {
    static LAST: RefCell<LastError> = RefCell::new(LastError {
        msg: CString::default(),
        offset: None,
    });
}

fn set_last(msg: &str, offset: Option<u64>) {
    // A message with a NUL byte (from a caller's key, say) is cut there.
    let msg = CString::new(msg.split('\0').next().unwrap_or_default()).unwrap_or_default();
    LAST.with(|l| {
        if let Ok(mut l) = l.try_borrow_mut() {
            l.msg = msg;
            l.offset = offset;
        }
    });
}

/// The message of the last failure on the calling thread, or "" if the
/// last call succeeded. The string stays valid until the next `cb_` call
/// on this thread; copy it to keep it.
#[no_mangle]
pub extern "C" fn cb_last_error_message() -> *const c_char {
    // The pointer outlives the borrow: the CString's heap buffer is not
    // moved or freed until the next `set_last`, which only a later `cb_`
    // call on this thread makes.
    LAST.with(|l| l.try_borrow().map_or(c"".as_ptr(), |l| l.msg.as_ptr()))
}

/// The byte offset in the input of the last failure on the calling
/// thread, or -1 if it has none: for a decode error, where in the frame
/// it was found (for a truncation, the number of bytes present).
#[no_mangle]
pub extern "C" fn cb_last_error_offset() -> i64 {
    LAST.with(|l| {
        l.try_borrow()
            .ok()
            .and_then(|l| l.offset)
            .and_then(|o| i64::try_from(o).ok())
            .unwrap_or(-1)
    })
}

/// Runs an entry point's body: clears the last error, catches a panic (a
/// bug; unwinding into C is undefined behaviour) as `CB_ERROR_INTERNAL`,
/// and records a failure's message.
///
/// The body's captures are asserted unwind-safe: after a panic the code is
/// `CB_ERROR_INTERNAL`, which documents that the handles involved may be
/// in any (memory-safe) state and should be freed.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Fail>) -> cb_error {
    set_last("", None);
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => cb_error::CB_OK,
        Ok(Err(fail)) => {
            set_last(&fail.msg, fail.offset);
            fail.code
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            set_last(&format!("internal error (a bug): {what}"), None);
            cb_error::CB_ERROR_INTERNAL
        }
    }
}

/// Panics inside the panic barrier, and returns what it returns:
/// `CB_ERROR_INTERNAL`. For a program's own tests that the library it
/// links was built to unwind (with `panic = "abort"` this call aborts).
#[no_mangle]
pub extern "C" fn cb_selftest_panic() -> cb_error {
    guard(|| panic!("cb_selftest_panic was called"))
}

/// `len` bytes at `p`, refusing NULL and zero lengths.
///
/// # Safety
/// If `p` is not NULL it points to `len` readable bytes that stay valid
/// and unchanged for `'a` (the call the slice is used in).
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize, what: &str) -> Result<&'a [u8], Fail> {
    if p.is_null() {
        return Err(Fail::null(what));
    }
    if len == 0 {
        return Err(Fail::new(
            cb_error::CB_ERROR_EMPTY_INPUT,
            format!("`{what}` has length 0"),
        ));
    }
    if len > isize::MAX as usize {
        return Err(Fail::invalid(format!("`{what}` is longer than any buffer")));
    }
    // SAFETY: non-NULL, `len` readable bytes valid for 'a (contract);
    // len <= isize::MAX as `from_raw_parts` requires.
    Ok(unsafe { core::slice::from_raw_parts(p, len) })
}

/// A caller's output buffer of `cap` bytes, refusing NULL (a capacity of 0
/// is a buffer too small for anything, reported by the caller).
///
/// # Safety
/// If `p` is not NULL it points to `cap` writable bytes, not aliased by
/// any other argument, valid for `'a`.
pub(crate) unsafe fn buffer<'a>(p: *mut u8, cap: usize, what: &str) -> Result<&'a mut [u8], Fail> {
    if p.is_null() {
        return Err(Fail::null(what));
    }
    let cap = cap.min(isize::MAX as usize);
    // SAFETY: non-NULL and `cap` writable, unaliased bytes (contract).
    Ok(unsafe { core::slice::from_raw_parts_mut(p, cap) })
}

/// An output argument, refusing NULL.
///
/// # Safety
/// If `p` is not NULL it points to a writable, aligned `T`, not aliased by
/// any other argument, valid for `'a`.
pub(crate) unsafe fn out<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Fail> {
    // SAFETY: NULL is mapped to None; otherwise valid per the contract.
    unsafe { p.as_mut() }.ok_or_else(|| Fail::null(what))
}

/// A handle (or input struct) passed by pointer, refusing NULL.
///
/// # Safety
/// If `p` is not NULL it points to a live `T` (for a handle: one this
/// library made and has not freed), not being written by another thread,
/// valid for `'a`.
pub(crate) unsafe fn handle<'a, T>(p: *const T, what: &str) -> Result<&'a T, Fail> {
    // SAFETY: NULL is mapped to None; otherwise valid per the contract.
    unsafe { p.as_ref() }.ok_or_else(|| Fail::null(what))
}

/// A handle passed for change, refusing NULL.
///
/// # Safety
/// As [`handle`], and no other reference to `*p` exists during `'a` (the
/// handle is used by one thread at a time, as the header says).
pub(crate) unsafe fn handle_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Fail> {
    // SAFETY: NULL is mapped to None; otherwise valid and unique per the
    // contract.
    unsafe { p.as_mut() }.ok_or_else(|| Fail::null(what))
}

/// Moves a new handle to C through `*out`.
pub(crate) fn give<T>(out: &mut *mut T, value: T) {
    *out = Box::into_raw(Box::new(value));
}

/// Frees a handle made by [`give`]; NULL is a no-op.
///
/// # Safety
/// `p` is NULL or a pointer [`give`] made for this `T` and not freed yet;
/// it is not used again.
pub(crate) unsafe fn free<T>(p: *mut T) -> cb_error {
    guard(|| {
        if !p.is_null() {
            // SAFETY: `p` came from Box::into_raw in `give` for this T and
            // is freed once (contract).
            drop(unsafe { Box::from_raw(p) });
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cb_error_name` indexes the table by code: each entry is its code's.
    #[test]
    fn the_names_are_in_code_order() {
        assert_eq!(ALL.len(), CB_ERROR_COUNT as usize);
        for (i, (code, name)) in ALL.iter().enumerate() {
            assert_eq!(*code as usize, i, "{name}");
            assert_eq!(name.trim_end_matches('\0'), format!("{code:?}"));
        }
    }
}
