//! The streaming codec (`format::stream`) holds the filter plus at most
//! `STREAM_READ_MEMORY` (reading) or `STREAM_WRITE_MEMORY` (writing) and
//! 8 bytes per coder block, whatever the frame
//! size: measured with the counting allocator on a 2^27-bit filter (16 MiB,
//! 16 coder blocks) coded and raw, writing to a sink and reading from a
//! reader that yields a few bytes at a time. One test in this binary, so
//! the allocator sees only its allocations.

use compressed_bloom::coder::static_coded::{Choice, Mode};
use compressed_bloom::format;
use compressed_bloom::format::stream::{
    read_frame, write_frame, StreamError, STREAM_READ_MEMORY, STREAM_WRITE_MEMORY,
};
use compressed_bloom::{
    encode, encode_as, BloomFilter, DecodeError, DecodeLimits, FilterParams, FilterType,
};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

/// A reader that returns at most 7 bytes per call (as a socket might).
struct Trickle<'a>(&'a [u8]);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(7).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn streaming_memory_is_the_filter_plus_a_constant() {
    let m = 1u64 << 27;
    let mut f = BloomFilter::new(FilterParams::new(m, 2, 5)).unwrap();
    for i in 0..4_000_000u32 {
        f.insert(&i.to_le_bytes());
    }
    let filter_bytes = (m / 8) as usize;
    let blocks = 16usize;
    let read_allowance = STREAM_READ_MEMORY + 8 * blocks;
    let write_allowance = STREAM_WRITE_MEMORY + 8 * blocks;
    let limits = DecodeLimits::default();
    for (name, frame) in [
        ("coded", encode_as(&f, FilterType::Coded)),
        ("raw", encode_as(&f, FilterType::Raw)),
    ] {
        // Writing: the same bytes as the in-memory encoder, with no copy of
        // the frame.
        if name == "coded" {
            let mut written = 0;
            let peak = peak_of(|| written = write_frame(&f, std::io::sink()).unwrap());
            assert_eq!(written as usize, frame.len());
            assert!(
                peak <= write_allowance,
                "write_frame held {peak} bytes, allowed {write_allowance}"
            );
            println!("write_frame: peak {peak} bytes beyond the filter");
            let mut out = Vec::new();
            write_frame(&f, &mut out).unwrap();
            assert_eq!(out, frame, "same bytes as encode()");
        }
        // Reading: the filter plus the constant, from a trickling reader.
        let mut got = None;
        let peak = peak_of(|| got = Some(read_frame(Trickle(&frame), &limits)));
        assert_eq!(got.unwrap().unwrap(), f, "{name}");
        assert!(
            peak <= filter_bytes + read_allowance,
            "{name}: read_frame held {peak} bytes, allowed {}",
            filter_bytes + read_allowance
        );
        println!(
            "read_frame ({name}): peak {} bytes beyond the filter",
            peak - filter_bytes
        );
    }
    // Frames follow one another: the reader stops at the frame's end.
    let small = {
        let mut g = BloomFilter::new(FilterParams::new(10_000, 3, 1)).unwrap();
        g.insert(b"x");
        g
    };
    let two = [encode(&small), encode(&small)].concat();
    let mut r = &two[..];
    assert_eq!(read_frame(&mut r, &limits).unwrap(), small);
    assert_eq!(read_frame(&mut r, &limits).unwrap(), small);
    assert!(r.is_empty());
    // A corrupt frame is an error after decoding; a short one an I/O error;
    // limits are checked before the filter is allocated.
    let mut bad = encode(&small);
    let n = bad.len();
    bad[n - 6] ^= 1;
    assert!(matches!(
        read_frame(&bad[..], &limits),
        Err(StreamError::Decode(_))
    ));
    assert!(matches!(
        read_frame(&encode(&small)[..20], &limits),
        Err(StreamError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof
    ));
    let frame = encode(&f);
    let tight = DecodeLimits {
        max_m: 1 << 20,
        ..limits
    };
    let mut res = None;
    let peak = peak_of(|| res = Some(read_frame(&frame[..], &tight)));
    assert!(matches!(
        res.unwrap(),
        Err(StreamError::Decode(DecodeError::LimitExceeded { .. }))
    ));
    assert!(peak < 64 * 1024, "refused after {peak} bytes");
    // A type-4 frame of one 2^27-bit block (a 5.4 MB stream) cut off 4 KiB
    // into its stream: the reader holds the filter and what arrived, not
    // the stream's declared length.
    let one_block = format::encode_static_with(
        &f,
        Choice {
            block_log: Some(27),
            mode: Some(Mode::Bytes),
        },
    );
    let h = format::inspect(&one_block, &limits).unwrap();
    assert!(h.payload_len > 4 << 20, "{}", h.payload_len);
    let cut = &one_block[..h.header_len + 4096];
    let mut res = None;
    let peak = peak_of(|| res = Some(read_frame(Trickle(cut), &limits)));
    assert!(matches!(
        res.unwrap(),
        Err(StreamError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof
    ));
    assert!(
        peak <= filter_bytes + 256 * 1024,
        "a cut type-4 frame held {peak} bytes, the filter is {filter_bytes}"
    );
    read_frame_allocates_the_filter_as_the_payload_arrives();
}

/// `read_frame` allocates the filter only once 1 byte per 4096 of it has
/// arrived (`PREFIX_EXPANSION`): a header declaring m = 2^32 (512 MiB)
/// followed by a few payload bytes and the end of the input holds what
/// arrived, not the filter (it allocated the 512 MiB at the header before).
/// Called from the one test, so that the allocator sees only its own.
fn read_frame_allocates_the_filter_as_the_payload_arrives() {
    use compressed_bloom::format::stream::PREFIX_EXPANSION;
    use compressed_bloom::format::varint;
    let m = 1u64 << 32;
    let payload_len = (m / 8).div_ceil(PREFIX_EXPANSION) + 1000; // within the expansion limit
    let mut head = vec![0xCB, 0xF1, 1, 1, 1, 0];
    for v in [0, m, 1, 0, payload_len] {
        varint::put(&mut head, v);
    }
    let limits = DecodeLimits::default();
    for sent in [0usize, 1000, 100_000] {
        let mut input = head.clone();
        input.extend(std::iter::repeat_n(0u8, sent));
        let mut res = None;
        let peak = peak_of(|| res = Some(read_frame(Trickle(&input), &limits)));
        assert!(matches!(
            res.unwrap(),
            Err(StreamError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof
        ));
        assert!(
            peak <= 2 * sent + 64 * 1024,
            "{sent} payload bytes: read_frame held {peak} bytes"
        );
        println!("m = 2^32, {sent} payload bytes then EOF: peak {peak} bytes");
    }
}
