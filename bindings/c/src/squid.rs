//! Squid cache digests: Squid's own bytes in and out, and URLs as Squid
//! keys them.

use crate::error::*;
use crate::filter::cb_filter;
use crate::{cb_limits, limits_or_default};
use compressed_bloom::kinds::squid::{Method, SquidDigest};
use compressed_bloom::AnyFilter;

/// Squid's method id of GET, the method of almost every digest entry
/// (POST 2, PUT 3, HEAD 4, CONNECT 5, TRACE 6, OPTIONS 7, DELETE 8).
pub const CB_SQUID_METHOD_GET: u8 = 1;

/// Imports a digest as Squid sends it (`len` bytes at `src`: its 128-byte
/// header, then the mask) into a new filter `*out` of kind
/// `CB_KIND_SQUID`. The header is checked as Squid checks it, and the
/// mask's size against `limits` (optional: NULL for the defaults), before
/// anything is allocated.
///
/// Errors: `CB_ERROR_TRUNCATED` (no complete header), `CB_ERROR_CORRUPT`,
/// `CB_ERROR_UNSUPPORTED` (a digest version Squid 5 does not read),
/// `CB_ERROR_LIMIT_EXCEEDED`.
///
/// # Safety
/// `src` is NULL or `len` readable bytes; `limits` is NULL or readable;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_squid_import(
    src: *const u8,
    len: usize,
    limits: *const cb_limits,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let src = unsafe { bytes(src, len, "src")? };
        // SAFETY: NULL or readable (contract).
        let limits = unsafe { limits_or_default(limits) };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        let d = SquidDigest::from_squid_bytes(src, &limits)?;
        give(o, cb_filter::new(AnyFilter::Squid(d)));
        Ok(())
    })
}

fn digest(f: &cb_filter) -> Result<&SquidDigest, Fail> {
    match &f.inner {
        AnyFilter::Squid(d) => Ok(d),
        _ => Err(Fail::new(
            cb_error::CB_ERROR_WRONG_KIND,
            format!("not a Squid digest but a {} filter", f.kind().name()),
        )),
    }
}

/// Exports a Squid digest (`CB_KIND_SQUID`) as Squid sends it into `dst`
/// (`capacity` bytes): the 128-byte header, then the mask. Sets
/// `*written` to its length, 128 + m / 8.
///
/// Errors: `CB_ERROR_WRONG_KIND` for another kind;
/// `CB_ERROR_DST_TOO_SMALL` (`*written` is the length needed).
///
/// # Safety
/// `filter` is NULL or a live handle; `dst` is NULL or `capacity` writable
/// bytes; `written` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_squid_export(
    filter: *const cb_filter,
    dst: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let f = unsafe { handle(filter, "filter")? };
        // SAFETY: NULL is refused; `capacity` writable bytes (contract).
        let dst = unsafe { buffer(dst, capacity, "dst")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let w = unsafe { out(written, "written")? };
        let d = digest(f)?;
        let len = 128 + (d.filter().m() / 8) as usize;
        *w = len;
        let Some(slot) = dst.get_mut(..len) else {
            return Err(Fail::new(
                cb_error::CB_ERROR_DST_TOO_SMALL,
                format!("the digest is {len} bytes, the buffer {} bytes", dst.len()),
            ));
        };
        slot.copy_from_slice(&d.to_squid_bytes());
        Ok(())
    })
}

/// Adds a URL (`len` bytes at `url`) requested with `method` (Squid's
/// method id: `CB_SQUID_METHOD_GET`, ...) to a Squid digest, and counts it
/// in the header as Squid does.
///
/// Errors: `CB_ERROR_WRONG_KIND` for another kind.
///
/// # Safety
/// `filter` is NULL or a live handle; `url` is NULL or `len` readable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn cb_squid_add(
    filter: *mut cb_filter,
    method: u8,
    url: *const u8,
    len: usize,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle used by this thread alone.
        let f = unsafe { handle_mut(filter, "filter")? };
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let url = unsafe { bytes(url, len, "url")? };
        digest(f)?;
        if let AnyFilter::Squid(d) = f.change() {
            d.add(Method(method), url);
        }
        Ok(())
    })
}

/// Sets `*result` to whether Squid would answer "may be cached" for the
/// URL and method (all four of its bits set).
///
/// Errors: `CB_ERROR_WRONG_KIND` for another kind.
///
/// # Safety
/// `filter` is NULL or a live handle; `url` is NULL or `len` readable
/// bytes; `result` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_squid_contains(
    filter: *const cb_filter,
    method: u8,
    url: *const u8,
    len: usize,
    result: *mut bool,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let f = unsafe { handle(filter, "filter")? };
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let url = unsafe { bytes(url, len, "url")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let r = unsafe { out(result, "result")? };
        *r = digest(f)?.contains(Method(method), url);
        Ok(())
    })
}
