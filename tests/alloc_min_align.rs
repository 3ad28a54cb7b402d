//! The codecs under an allocator that gives no more alignment than a
//! layout asks for. glibc's malloc aligns everything to 16 bytes, which
//! hides a cast of a buffer to a type of larger alignment than its own
//! (bytemuck panics on a misaligned cast): a bump allocator in a `no_std`
//! build, or any allocator within its rights, would not. This binary's
//! allocator places every block whose alignment is below 8 at an address
//! that is exactly that aligned and no more (2 mod 8 for alignment 1 or
//! 2, 4 mod 8 for 4), and round trips every frame type, kind and delta
//! through it, in memory and streamed, on one and two threads.
//!
//! The type-4 decode table's buffer (`coder::bytes::TableBuf`, viewed as
//! u64s for its fill) must be 8-byte aligned: with the 2-byte alignment of
//! its entries, every mode-1 block decode would panic here.

use std::alloc::{GlobalAlloc, Layout, System};

use compressed_bloom::coder::static_coded::{self, Choice, Mode};
use compressed_bloom::delta;
use compressed_bloom::format::{self, stream, FilterType};
use compressed_bloom::{BloomFilter, DecodeLimits, FilterParams};

/// Offsets blocks of alignment 1, 2 and 4 so that they are aligned to
/// exactly that.
struct MinAlign;

/// The offset a block of `align` gets: its address ≡ offset (mod 8).
fn offset(align: usize) -> usize {
    match align {
        1 | 2 => 2,
        4 => 4,
        _ => 0,
    }
}

// SAFETY: a block of alignment ≥ 8 is the system allocator's, unchanged.
// A smaller one is a system block of size + 8 at alignment 8, of which the
// caller gets the bytes from `offset(align)` on: `size` bytes, within the
// system block (offset ≤ 4 < 8), aligned to `align` (the offset is a
// multiple of it). `dealloc` gets the same layout back, so it subtracts the
// same offset and frees the system block with the layout it was made with.
// The default `realloc` allocates anew, copies and frees through these two.
#[allow(unsafe_code)] // a global allocator is an unsafe trait; the crate denies unsafe elsewhere
unsafe impl GlobalAlloc for MinAlign {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let off = offset(l.align());
        if off == 0 {
            return unsafe { System.alloc(l) };
        }
        let Ok(outer) = Layout::from_size_align(l.size() + 8, 8) else {
            return std::ptr::null_mut();
        };
        let p = unsafe { System.alloc(outer) };
        if p.is_null() {
            return p;
        }
        unsafe { p.add(off) }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        let off = offset(l.align());
        if off == 0 {
            return unsafe { System.dealloc(p, l) };
        }
        // The layout was valid when `alloc` made it from the same size.
        let outer = Layout::from_size_align(l.size() + 8, 8).expect("allocated before");
        unsafe { System.dealloc(p.sub(off), outer) }
    }
}

#[global_allocator]
static A: MinAlign = MinAlign;

fn filter(m: u64, k: u32, n: u32) -> BloomFilter {
    let mut f = BloomFilter::new(FilterParams::new(m, k, 9)).unwrap();
    for i in 0..n {
        f.insert(&i.to_le_bytes());
    }
    f
}

#[test]
fn the_allocator_misaligns_small_alignments() {
    // Without this the test below would prove nothing.
    let v: Vec<u8> = vec![0; 64];
    assert_eq!(v.as_ptr() as usize % 8, 2);
    let w: Vec<u32> = vec![0; 16];
    assert_eq!(w.as_ptr() as usize % 8, 4);
    let x: Vec<u64> = vec![0; 8];
    assert_eq!(x.as_ptr() as usize % 8, 0);
}

#[test]
fn every_frame_type_round_trips_under_minimal_alignment() {
    let limits = DecodeLimits::unlimited();
    // Dense and sparse arrays, one block and several (2^22-bit blocks for
    // type 4, so a 2^24-bit array has four 8-lane blocks: the AVX-512 group
    // decoder's unit where the machine has it).
    for (m, k, n) in [
        (100_000u64, 3u32, 10_000u32),
        (1 << 24, 2, 1_500_000),
        (1 << 24, 1, 20_000),
    ] {
        let f = filter(m, k, n);
        let mut frames = vec![
            format::encode_as(&f, FilterType::Raw),
            format::encode_as(&f, FilterType::Coded),
            format::encode_static(&f),
        ];
        for mode in [Mode::Runs, Mode::Bytes] {
            frames.push(format::encode_static_with(
                &f,
                Choice {
                    block_log: Some(22),
                    mode: Some(mode),
                },
            ));
        }
        for frame in &frames {
            let back = format::decode(frame, &DecodeLimits::default()).unwrap();
            assert!(back == f, "m={m}: in memory");
            let streamed = stream::read_frame(&frame[..], &limits).unwrap();
            assert!(streamed == f, "m={m}: streamed");
            let mut bits = Vec::new();
            stream::write_frame_bits(frame, &limits, &mut bits).unwrap();
            assert!(bits == f.to_bytes(), "m={m}: bits");
        }
        // The payload decoders on one and two threads, the portable one too.
        let mut payload = Vec::new();
        static_coded::encode_with(
            f.as_words(),
            m,
            &mut payload,
            2,
            Choice {
                block_log: Some(22),
                mode: Some(Mode::Bytes),
            },
        );
        for threads in [1, 2] {
            let mut words = vec![0u64; f.as_words().len()];
            static_coded::decode_with_threads(&payload, m, &mut words, threads).unwrap();
            assert!(words == f.as_words(), "m={m} threads={threads}");
            static_coded::decode_portable(&payload, m, &mut words, threads).unwrap();
            assert!(words == f.as_words(), "m={m} threads={threads}: portable");
        }
        // A delta to a changed filter, applied.
        let mut g = f.clone();
        for i in n..n + 500 {
            g.insert(&i.to_le_bytes());
        }
        let deltas = [
            delta::encode_delta_plain(&f, &g).unwrap(),
            delta::encode_delta_conditional(&f, &g).unwrap(),
        ];
        for d in &deltas {
            let mut base = f.clone();
            delta::apply(&mut base, d, &limits).unwrap();
            assert!(base == g, "m={m}: delta");
        }
    }
}
