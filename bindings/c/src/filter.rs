//! The filter handle: a filter of any kind, made from parameters, from a
//! set of keys, or by decoding a frame.

use crate::error::*;
use crate::{cb_kind, key_list};
use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
use compressed_bloom::kinds::ribbon::{Build, RibbonFilter};
use compressed_bloom::kinds::scalable::ScalableBloomFilter;
use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::kinds::squid::SquidDigest;
use compressed_bloom::{
    AnyFilter, BloomFilter, Coding, CountingBloomFilter, FilterParams, UpdateId,
};
use std::sync::Mutex;

/// A filter of any kind (`cb_filter_get_info` says which). Made by the
/// `cb_filter_new*` functions, `cb_filter_from_plan`, `cb_decode*`,
/// `cb_squid_import` and `cb_filter_clone`; freed by `cb_filter_free`.
///
/// Threads: a handle may move between threads (it is `Send`), but must be
/// used by one thread at a time; different handles can be used in
/// parallel.
pub struct cb_filter {
    pub(crate) inner: AnyFilter,
    /// The last frame `cb_encode_bound` computed, so that the `cb_encode`
    /// that follows it copies the frame instead of coding it again. Every
    /// change to the filter clears it.
    cache: Mutex<Option<Cached>>,
}

struct Cached {
    coding: Coding,
    id: Option<UpdateId>,
    frame: Vec<u8>,
}

impl cb_filter {
    pub(crate) fn new(inner: AnyFilter) -> cb_filter {
        cb_filter {
            inner,
            cache: Mutex::new(None),
        }
    }

    /// The filter, for a change: the cached frame no longer describes it.
    pub(crate) fn change(&mut self) -> &mut AnyFilter {
        *self.cache.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        &mut self.inner
    }

    /// The handle's kind (Squid digests apart from standard filters).
    pub(crate) fn kind(&self) -> cb_kind {
        kind_of(&self.inner)
    }

    /// The full frame with `coding` and `id`, from the cache if it holds
    /// it; `keep` stores it there for the next call.
    pub(crate) fn frame(&self, coding: Coding, id: Option<UpdateId>, keep: bool) -> Vec<u8> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.as_ref() {
            if c.coding == coding && c.id == id {
                return c.frame.clone();
            }
        }
        let frame = compressed_bloom::Kind::encode_frame(&self.inner, coding, id);
        if keep {
            *cache = Some(Cached {
                coding,
                id,
                frame: frame.clone(),
            });
        }
        frame
    }

    /// Keeps `frame`, the filter's frame with `coding` and `id`, for the
    /// next [`cb_filter::frame`].
    pub(crate) fn keep(&self, coding: Coding, id: Option<UpdateId>, frame: Vec<u8>) {
        *self.cache.lock().unwrap_or_else(|e| e.into_inner()) = Some(Cached { coding, id, frame });
    }
}

impl Clone for cb_filter {
    fn clone(&self) -> Self {
        cb_filter::new(self.inner.clone())
    }
}

pub(crate) fn kind_of(f: &AnyFilter) -> cb_kind {
    match f {
        AnyFilter::Squid(_) => cb_kind::CB_KIND_SQUID,
        other => cb_kind::of_wire(other.kind()),
    }
}

/// Adds a key to a filter of any kind that takes keys one at a time.
pub(crate) fn add_key(f: &mut AnyFilter, key: &[u8]) -> Result<(), Fail> {
    match f {
        AnyFilter::Standard(f) => f.insert(key),
        AnyFilter::Partitioned(f) => f.insert(key),
        AnyFilter::Counting(f) => f.insert(key),
        AnyFilter::Scalable(f) => f.try_insert(key).map_err(|e| {
            Fail::new(
                cb_error::CB_ERROR_INFEASIBLE,
                format!("the key was not added: {e}"),
            )
        })?,
        AnyFilter::Squid(d) => d.add_key(key),
        other => {
            return Err(Fail::new(
                cb_error::CB_ERROR_WRONG_KIND,
                format!(
                    "a {} filter is built from its whole set of keys and takes no more",
                    kind_of(other).name()
                ),
            ))
        }
    }
    Ok(())
}

/// Removes a key from a counting filter.
pub(crate) fn remove_key(f: &mut AnyFilter, key: &[u8]) -> Result<bool, Fail> {
    match f {
        AnyFilter::Counting(f) => Ok(f.remove(key)),
        other => Err(Fail::new(
            cb_error::CB_ERROR_WRONG_KIND,
            format!(
                "only counting filters can remove keys; this is a {} filter",
                kind_of(other).name()
            ),
        )),
    }
}

/// What a filter handle holds.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct cb_filter_info {
    /// Its kind (a `cb_kind` value).
    pub kind: u32,
    /// Bits of the array (the scalable kind: its first layer's; the
    /// ribbon kind: its rows).
    pub m: u64,
    /// Hash positions per key (the ribbon kind: its lower column count).
    pub k: u32,
    /// The hash seed.
    pub seed: u64,
    /// The number of keys the filter declares.
    pub n: u64,
    /// One bits (counting: non-zero counters; ribbon: solution bits).
    pub ones: u64,
    /// The hash scheme's wire id: 1 (XXH3) or 2 (Squid's MD5).
    pub hash_scheme: u8,
}

fn new_checked(kind: u32, m: u64, k: u32, seed: u64) -> Result<AnyFilter, Fail> {
    let p = FilterParams::new(m, k, seed);
    Ok(match cb_kind::from_raw(kind)? {
        cb_kind::CB_KIND_STANDARD => AnyFilter::Standard(BloomFilter::new(p)?),
        cb_kind::CB_KIND_PARTITIONED => AnyFilter::Partitioned(PartitionedBloomFilter::new(p)?),
        cb_kind::CB_KIND_COUNTING => AnyFilter::Counting(CountingBloomFilter::new(p)?),
        other => {
            return Err(Fail::invalid(format!(
                "cb_filter_new makes standard, partitioned and counting filters; a {} filter has \
                 its own constructor",
                other.name()
            )))
        }
    })
}

/// Makes an empty standard, partitioned or counting filter of m bits
/// (counters for counting), k hash positions per key and the hash `seed`,
/// into `*out`. Sender and receiver must agree on all three; a frame
/// carries them. A partitioned filter needs m to be a multiple of k.
///
/// Errors: `CB_ERROR_INVALID_ARGUMENT` for another kind, m of 0 or above
/// 2^56, k of 0 or above 64; `CB_ERROR_OUT_OF_MEMORY`.
///
/// # Safety
/// `out` is NULL or points to a writable `cb_filter *`.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_new(
    kind: u32,
    m: u64,
    k: u32,
    seed: u64,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        let f = new_checked(kind, m, k, seed)?;
        give(o, cb_filter::new(f));
        Ok(())
    })
}

/// Makes an empty scalable filter into `*out`: its first layer holds
/// `initial_capacity` keys, each next one twice as many at a tighter rate,
/// so that its false-positive rate stays below `fpr` however many keys
/// arrive (up to 64 layers).
///
/// Errors: `CB_ERROR_INVALID_ARGUMENT` for a capacity of 0 or a rate
/// outside (0, 1).
///
/// # Safety
/// `out` is NULL or points to a writable `cb_filter *`.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_new_scalable(
    initial_capacity: u64,
    fpr: f64,
    seed: u64,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        let f = ScalableBloomFilter::with_capacity_and_rate(initial_capacity, fpr, seed)
            .map_err(|e| Fail::invalid(e.to_string()))?;
        give(o, cb_filter::new(AnyFilter::Scalable(f)));
        Ok(())
    })
}

/// Makes a sparse filter of the `count` keys into `*out`: the positions of
/// the one bits of an m-bit standard filter with k positions per key,
/// without the array (for m far larger than the set, up to 2^56). Key `i`
/// is `key_lens[i]` bytes at `keys[i]`; an empty set may pass NULL arrays
/// with count 0. A sparse filter takes no keys afterwards.
///
/// Errors: `CB_ERROR_INVALID_ARGUMENT` for m or k out of range;
/// `CB_ERROR_EMPTY_INPUT` for a key of length 0.
///
/// # Safety
/// `keys` and `key_lens` are NULL or point to `count` entries, each key to
/// `key_lens[i]` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_new_sparse(
    m: u64,
    k: u32,
    seed: u64,
    keys: *const *const u8,
    key_lens: *const usize,
    count: usize,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        // SAFETY: the arrays hold `count` valid keys (contract).
        let keys = unsafe { key_list(keys, key_lens, count)? };
        let f = SparseFilter::from_keys(FilterParams::new(m, k, seed), keys)?;
        give(o, cb_filter::new(AnyFilter::Sparse(f)));
        Ok(())
    })
}

/// Makes a ribbon filter of the `count` keys into `*out`, with a
/// false-positive rate of at most `fpr` (in (0, 1); rates of 2^-r are the
/// most compact). `fast` non-zero builds about a third faster for a frame
/// about 1% larger. Keys as for `cb_filter_new_sparse`. A ribbon filter
/// takes no keys afterwards: a changed set is built again.
///
/// Errors: `CB_ERROR_INVALID_ARGUMENT` for a rate out of range or a set
/// that cannot be solved (duplicate keys hash alike, which is not an
/// error, but 2^32 keys in one filter are);
/// `CB_ERROR_EMPTY_INPUT` for a key of length 0.
///
/// # Safety
/// As `cb_filter_new_sparse`.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_new_ribbon(
    keys: *const *const u8,
    key_lens: *const usize,
    count: usize,
    fpr: f64,
    seed: u64,
    fast: u32,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        // SAFETY: the arrays hold `count` valid keys (contract).
        let keys = unsafe { key_list(keys, key_lens, count)? };
        let how = if fast != 0 {
            Build::Fast
        } else {
            Build::Compact
        };
        let f = RibbonFilter::from_keys_with(keys, fpr, seed, how)
            .map_err(|e| Fail::invalid(e.to_string()))?;
        give(o, cb_filter::new(AnyFilter::Ribbon(f)));
        Ok(())
    })
}

/// Makes an empty Squid cache digest into `*out`, sized as Squid sizes
/// one for `capacity` entries at `bits_per_entry` bits each (Squid's
/// default is 5). Add URLs with `cb_squid_add`; `cb_squid_export` writes
/// it as Squid sends it, `cb_encode` as a frame.
///
/// Errors: `CB_ERROR_INVALID_ARGUMENT` for a size Squid would refuse.
///
/// # Safety
/// `out` is NULL or points to a writable `cb_filter *`.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_new_squid(
    capacity: u64,
    bits_per_entry: u32,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        let bpe = u8::try_from(bits_per_entry).map_err(|_| {
            Fail::invalid(format!("bits_per_entry = {bits_per_entry}: at most 255"))
        })?;
        let d = SquidDigest::new(capacity, bpe).map_err(|e| match Fail::from(e) {
            f if f.code == cb_error::CB_ERROR_OUT_OF_MEMORY => f,
            f => Fail {
                code: cb_error::CB_ERROR_INVALID_ARGUMENT,
                ..f
            },
        })?;
        give(o, cb_filter::new(AnyFilter::Squid(d)));
        Ok(())
    })
}

/// Adds a key (`len` bytes at `key`) to a standard, partitioned, counting
/// or scalable filter, or a Squid digest (a Squid store key: use
/// `cb_squid_add` for a method and URL).
///
/// Errors: `CB_ERROR_WRONG_KIND` for sparse and ribbon filters, which are
/// built from their whole set; `CB_ERROR_INFEASIBLE` when a scalable
/// filter needs a 65th layer (the key is not added).
///
/// # Safety
/// `filter` is NULL or a live handle; `key` is NULL or `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_add(
    filter: *mut cb_filter,
    key: *const u8,
    len: usize,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle used by this thread alone.
        let f = unsafe { handle_mut(filter, "filter")? };
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let key = unsafe { bytes(key, len, "key")? };
        add_key(f.change(), key)
    })
}

/// Sets `*result` to whether the key may be in the set: true for every key
/// added (no false negatives), true for others with the filter's
/// false-positive rate.
///
/// # Safety
/// `filter` is NULL or a live handle; `key` is NULL or `len` readable
/// bytes; `result` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_contains(
    filter: *const cb_filter,
    key: *const u8,
    len: usize,
    result: *mut bool,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let f = unsafe { handle(filter, "filter")? };
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let key = unsafe { bytes(key, len, "key")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let r = unsafe { out(result, "result")? };
        *r = f.inner.contains(key);
        Ok(())
    })
}

/// Removes a key from a counting filter; `*removed` (if `removed` is not
/// NULL: it is optional) is set to whether the key was present, that is
/// all its counters were non-zero. Remove only keys that were added: a
/// key that was not (a false positive) takes counts from others.
///
/// Errors: `CB_ERROR_WRONG_KIND` for a filter of another kind.
///
/// # Safety
/// `filter` is NULL or a live handle; `key` is NULL or `len` readable
/// bytes; `removed` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_remove(
    filter: *mut cb_filter,
    key: *const u8,
    len: usize,
    removed: *mut bool,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle used by this thread alone.
        let f = unsafe { handle_mut(filter, "filter")? };
        // SAFETY: `len` readable bytes (contract); NULL and 0 refused.
        let key = unsafe { bytes(key, len, "key")? };
        let was = remove_key(f.change(), key)?;
        // SAFETY: NULL (optional) or writable (contract).
        if let Some(r) = unsafe { removed.as_mut() } {
            *r = was;
        }
        Ok(())
    })
}

/// Fills `*info` with the filter's kind, parameters and counts.
///
/// # Safety
/// `filter` is NULL or a live handle; `info` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_get_info(
    filter: *const cb_filter,
    info: *mut cb_filter_info,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let f = unsafe { handle(filter, "filter")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(info, "info")? };
        let p = f.inner.params();
        *o = cb_filter_info {
            kind: f.kind() as u32,
            m: p.m,
            k: p.k,
            seed: p.seed,
            n: f.inner.len(),
            ones: f.inner.count_ones(),
            hash_scheme: p.scheme.id(),
        };
        Ok(())
    })
}

/// Makes a copy of the filter into `*out` (a delta needs the old version
/// and the new: copy before changing).
///
/// # Safety
/// `filter` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_clone(
    filter: *const cb_filter,
    out_filter: *mut *mut cb_filter,
) -> cb_error {
    guard(|| {
        // SAFETY: NULL is refused; a live handle (contract).
        let f = unsafe { handle(filter, "filter")? };
        // SAFETY: NULL is refused; otherwise writable (contract).
        let o = unsafe { out(out_filter, "out_filter")? };
        give(o, f.clone());
        Ok(())
    })
}

/// Frees a filter handle. NULL is accepted and does nothing.
///
/// # Safety
/// `filter` is NULL or a live handle, not used again.
#[no_mangle]
pub unsafe extern "C" fn cb_filter_free(filter: *mut cb_filter) -> cb_error {
    // SAFETY: NULL or a handle this library made, freed once (contract).
    unsafe { free(filter) }
}
