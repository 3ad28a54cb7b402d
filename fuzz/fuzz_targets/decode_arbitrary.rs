//! Any bytes, tight limits: the decoder returns a filter or a typed error,
//! never panics, never holds more memory than the limits allow plus a small
//! constant, and anything it accepts re-encodes to a frame that decodes to
//! the same filter.
#![no_main]

use compressed_bloom::{decode_with_limits, encode, DecodeLimits};
use libfuzzer_sys::fuzz_target;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// Counts live heap bytes and their peak.
struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator, which
// upholds the GlobalAlloc contract; the counters are plain atomics and touch
// no memory the allocator hands out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(l.size(), SeqCst) + l.size();
        PEAK.fetch_max(now, SeqCst);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        CURRENT.fetch_sub(l.size(), SeqCst);
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Memory the decoder may hold beyond the output the limits allow: the
/// 32 KiB decode table and a few small vectors (tests/alloc_limit.rs
/// measures the same allowance).
const CONSTANT: usize = 128 * 1024;

fuzz_target!(|data: &[u8]| {
    let limits = DecodeLimits {
        max_m: 1 << 22,
        max_k: 64,
        max_frame_len: 1 << 20,
        max_expansion: None,
    };
    let before = CURRENT.load(SeqCst);
    PEAK.store(before, SeqCst);
    let decoded = decode_with_limits(data, &limits);
    let peak = PEAK.load(SeqCst) - before;
    let allowed = (limits.max_m / 8) as usize + CONSTANT;
    assert!(peak <= allowed, "decoding held {peak} bytes, allowed {allowed}");
    if let Ok(f) = decoded {
        assert!(f.m() <= limits.max_m);
        let again = encode(&f);
        assert_eq!(decode_with_limits(&again, &limits).as_ref(), Ok(&f));
    }
});
