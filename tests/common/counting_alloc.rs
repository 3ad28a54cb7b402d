//! A global allocator that counts live heap bytes and their peak, so a test
//! (or the `decode_arbitrary` fuzz target, which includes this file) can
//! check how much memory a decoder holds. Include it only in a binary that
//! should count every allocation: it installs itself as the global
//! allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// Forwards to the system allocator and counts.
pub struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator, which
// upholds the GlobalAlloc contract; the counters are plain atomics and touch
// no memory the allocator hands out.
#[allow(unsafe_code)] // a global allocator is an unsafe trait; the crate denies unsafe elsewhere
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

/// Bytes allocated at the peak of `f`, above what was live before it. Not
/// meaningful while other threads allocate.
pub fn peak_of(f: impl FnOnce()) -> usize {
    let base = CURRENT.load(SeqCst);
    PEAK.store(base, SeqCst);
    f();
    PEAK.load(SeqCst) - base
}
