//! What `tokio_codec::FrameCodec` buffers and what a `Subscriber` holds
//! for the worst standard frames the default limits accept
//! (docs/HARDENING.md, "Streams" and "Bounded memory"). One test in this
//! binary, so the counting allocator sees only its allocations.
#![cfg(feature = "tokio")]

use compressed_bloom::tokio_codec::FrameCodec;
use compressed_bloom::{
    coder, decode_any, encode, AnyFilter, BloomFilter, DecodeLimits, FilterParams, Subscriber,
};
use futures_util::StreamExt;
use tokio_util::codec::FramedRead;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

#[path = "common/raw_frame.rs"]
mod raw_frame;
use raw_frame::raw_frame;

/// The worst standard frames the default limits accept:
///
/// * for the codec, the longest: raw at m = 2^32 (`max_m`), 512 MiB of
///   payload (a standard frame is at most raw size, docs/FORMAT.md 2.3
///   step 4). `FramedRead` over it holds only the frame's buffer: it
///   grows as `Vec` grows (to at most max(2 · capacity, length + 1 MiB),
///   the codec asking for at most 1 MiB past what arrived), so the buffer
///   stays under 2 · frame + 1 MiB, and while it grows this allocator
///   counts the old buffer and the new one (it copies on realloc, as
///   glibc does not for blocks this large): under 3 · frame + 1 MiB.
/// * for a `Subscriber`, the frames whose output is the most the limits
///   allow (512 MiB): the raw one and the same filter coded (an empty
///   filter of 512 coder blocks, 11,795 bytes, below the expansion floor).
///   A `Subscriber` holds what `decode_any` holds for the same frame: it
///   decodes once and digests the standard filter's words in place.
#[test]
fn the_codec_and_a_subscriber_hold_the_frame_and_the_filter() {
    let m = 1u64 << 32;
    let limits = DecodeLimits::default();
    assert_eq!(limits.max_m, m);
    let raw = raw_frame(m);
    let output = (m / 8) as usize;

    // FrameCodec, as a transport drives it.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut got = None;
    let peak = peak_of(|| {
        let mut framed = FramedRead::new(&raw[..], FrameCodec::new(limits));
        got = Some(rt.block_on(framed.next()).unwrap().unwrap());
    });
    let frame = got.unwrap();
    assert_eq!(frame.bytes.len(), raw.len());
    let bound = 3 * raw.len() + (1 << 20);
    println!(
        "FrameCodec: a {}-byte frame buffered at a peak of {peak} bytes ({:.3} per frame byte; bound {bound})",
        raw.len(),
        peak as f64 / raw.len() as f64
    );
    assert!(peak >= raw.len(), "the frame is buffered: {peak}");
    assert!(peak <= bound, "FrameCodec: peak {peak}, bound {bound}");
    // The checked frame decodes beside its buffer: the output and no copy.
    let peak = peak_of(|| assert!(frame.decode(&limits).is_ok()));
    println!("Frame::decode: peak {peak} bytes beside the frame");
    assert!(
        (output..=output + 16 * 1024).contains(&peak),
        "Frame::decode: peak {peak}"
    );
    drop(frame);

    let coded = encode(&BloomFilter::new(FilterParams::new(m, 2, 0)).unwrap());
    assert_eq!(coded.len(), 11_795);
    // The decoder's own tables (tests/alloc_threads.rs): 32 KiB per
    // decoding thread, 128 bytes per coder block, 16 KiB of small vectors.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let blocks = coder::block_count(m) as usize;
    let tables = threads.min(blocks) * 32 * 1024 + blocks * 128 + 16 * 1024;
    for (name, f) in [("raw", &raw), ("coded", &coded)] {
        let direct = peak_of(|| assert!(decode_any(f, &limits).is_ok()));
        let mut sub = Subscriber::<AnyFilter>::new(limits);
        let held = peak_of(|| assert!(sub.receive(f).is_ok()));
        println!(
            "{name} ({} bytes): decode_any peak {direct}, Subscriber peak {held} bytes",
            f.len()
        );
        assert!(
            held <= output + tables,
            "{name}: Subscriber peak {held}, output {output} + tables {tables}"
        );
        // Same decode, same allocations; the digest hashes the words in
        // place. The decoder's threads may keep a table buffer from an
        // earlier decode (docs/HARDENING.md), so the two peaks can differ
        // by the tables, no more.
        assert!(
            held.abs_diff(direct) <= tables,
            "{name}: Subscriber {held} against decode_any {direct}"
        );
        drop(sub);
    }
}
