//! What `cbloom` holds for the worst frames its limits accept, and that it
//! refuses the first frame past them before allocating (docs/HARDENING.md,
//! "Expansion" and "Cost per frame byte"). `cbloom` reads frames under its
//! own limits: any frame may decode to 1 GiB (the floor, as a ratio of
//! ⌈2^30 / frame length⌉), and a frame over 256 KiB to 4096 times its
//! length.
//!
//! Memory is bounded with a cap on the child's data segment (`ulimit -d`:
//! on Linux, RLIMIT_DATA covers the heap and every private writable
//! mapping, so it counts what is allocated, touched or not, which is at
//! least what is resident): a command that succeeds under the cap never
//! held more. Where `/usr/bin/time` exists the peak resident set is
//! printed too (`--nocapture`); it is smaller, since pages allocated
//! zeroed and never written are not resident.

use crate::process::{s, stderr, BIN};
use compressed_bloom::wire::varint;
use compressed_bloom::{coder, CountingBloomFilter, FilterParams};
use std::path::Path;
use std::process::{Command, Output};

/// What `cbloom` needs beside the data it reads (its code, the standard
/// library's buffers, thread stacks' guard mappings): tests/cli/limits.rs
/// allows 32 MiB, as here.
const PROCESS: u64 = 32 << 20;

/// The CLI's memory floor, 1 GiB.
const FLOOR: u64 = 1 << 30;

/// Runs `cbloom args` with its data segment capped at `cap` bytes, under
/// `/usr/bin/time` where it exists; returns the output and the peak
/// resident set in KiB that time measured.
fn run_capped(args: &[&str], cap: u64, dir: &Path) -> (Output, Option<u64>) {
    let time = Path::new("/usr/bin/time");
    let rss = dir.join("rss.txt");
    let script = if time.exists() {
        format!(
            "ulimit -d {} && exec /usr/bin/time -f %M -o '{}' \"$0\" \"$@\"",
            cap / 1024,
            rss.display()
        )
    } else {
        format!("ulimit -d {} && exec \"$0\" \"$@\"", cap / 1024)
    };
    let o = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(BIN)
        .args(args)
        .output()
        .unwrap();
    let peak = std::fs::read_to_string(&rss)
        .ok()
        .and_then(|t| t.lines().last()?.trim().parse().ok());
    let _ = std::fs::remove_file(&rss);
    (o, peak)
}

/// The largest m whose counters and map, ⌈m/2⌉ + ⌈m/8⌉ bytes, fit in
/// `bytes`.
fn counting_m_within(bytes: u64) -> u64 {
    let mut m = bytes * 8 / 5;
    while m.div_ceil(2) + m.div_ceil(8) > bytes {
        m -= 1;
    }
    while (m + 1).div_ceil(2) + (m + 1).div_ceil(8) <= bytes {
        m += 1;
    }
    m
}

/// `cbloom decode` of a counting frame holds the frame, the counters
/// (⌈m/2⌉ bytes) and, while they are decoded, the map (⌈m/8⌉ bytes), and
/// writes the raw frame from the counters in pieces. The worst frame its
/// limits accept is the one with the most counters per frame byte: an
/// empty filter (a coded map of zeros, no values) at the largest m whose
/// counters and map fit the floor, 1 GiB (m = 1,717,986,918 from a frame
/// of about 4 KB). It decodes under a cap of the counters, the map, twice
/// the frame and the process's 32 MiB; under the same cap less the map it
/// fails, so the cap measures what the decoder holds.
#[cfg(target_os = "linux")]
#[test]
fn cbloom_decode_of_the_worst_counting_frame_holds_its_counters_and_map() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // The limit depends on the frame's length, which barely depends on m:
    // settle both.
    let mut m = counting_m_within(FLOOR);
    let frame = loop {
        let f = compressed_bloom::kinds::counting::encode_counting(
            &CountingBloomFilter::new(FilterParams::new(m, 3, 1)).unwrap(),
        );
        let len = f.len() as u64;
        let limit = FLOOR.div_ceil(len) * len; // the CLI's ratio times the frame
        let most = counting_m_within(limit);
        if most == m {
            break f;
        }
        m = most;
    };
    let len = frame.len() as u64;
    let held = m.div_ceil(2) + m.div_ceil(8);
    assert!(
        held + 8 > FLOOR && len * 4096 < FLOOR,
        "m = {m}, frame {len}"
    );
    let path = dir.join("counting.cbf");
    std::fs::write(&path, &frame).unwrap();
    let args = ["decode", s(&path), "-o", "/dev/null"];
    let cap = held + 2 * len + PROCESS;
    let (o, rss) = run_capped(&args, cap, dir);
    assert!(
        o.status.success(),
        "cbloom decode under {cap} bytes: {:?} {}",
        o.status,
        stderr(&o)
    );
    println!(
        "cbloom decode, counting m = {m} from {len} bytes: within a data cap of {cap} bytes \
         (counters and map {held}); peak RSS {rss:?} KiB"
    );
    // One counter past it is refused, naming the flag that raises it.
    let past = compressed_bloom::kinds::counting::encode_counting(
        &CountingBloomFilter::new(FilterParams::new(m + 1, 3, 1)).unwrap(),
    );
    assert_eq!(past.len(), frame.len());
    let ppath = dir.join("past.cbf");
    std::fs::write(&ppath, &past).unwrap();
    let (o, _) = run_capped(
        &["decode", s(&ppath), "-o", "/dev/null"],
        2 * len + PROCESS,
        dir,
    );
    assert!(!o.status.success(), "m + 1 was decoded");
    assert!(
        stderr(&o).contains("expansion") && stderr(&o).contains("--max-expansion"),
        "{}",
        stderr(&o)
    );
    // Without room for the map the decode fails: the cap binds.
    let (o, _) = run_capped(&args, cap - m.div_ceil(8), dir);
    assert!(
        !o.status.success() && stderr(&o).contains("cannot allocate"),
        "cbloom decode without room for the map: {:?} {}",
        o.status,
        stderr(&o)
    );
}

/// A standard frame of exactly `len` bytes, type 1, whose array is `out`
/// bytes: `full` coder blocks of 2^23 bits each coded to the same
/// 254-byte stream (2 bytes of block table each: 256 bytes per block),
/// then an empty last block that takes the rest of m = 8 · out.
fn standard_frame(full: u64, block: &[u8], m: u64) -> Vec<u8> {
    let last_bits = m - full * coder::BLOCK_BITS;
    assert!(last_bits > 0 && last_bits <= coder::BLOCK_BITS);
    let mut last = Vec::new();
    coder::encode(
        &vec![0u64; last_bits.div_ceil(64) as usize],
        last_bits,
        &mut last,
    );
    let mut payload = Vec::new();
    for _ in 0..full {
        varint::put(&mut payload, block.len() as u64);
    }
    for _ in 0..full {
        payload.extend_from_slice(block);
    }
    payload.extend_from_slice(&last);
    let mut f = vec![0xCB, 0xF1, 1, 1, 1, 0];
    for v in [0, m, 1, 0, payload.len() as u64] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(&payload);
    let crc = crc32c::crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

/// One 2^23-bit block whose coded stream is 254 bytes (bits spread by a
/// fixed-seed generator, as many as it takes).
fn a_254_byte_block() -> Vec<u8> {
    let words = (coder::BLOCK_BITS / 64) as usize;
    for n in 60..400u64 {
        let mut w = vec![0u64; words];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bit = x % coder::BLOCK_BITS;
            w[(bit / 64) as usize] |= 1 << (bit % 64);
        }
        let mut out = Vec::new();
        coder::encode(&w, coder::BLOCK_BITS, &mut out);
        if out.len() == 254 {
            return out;
        }
    }
    panic!("no block codes to 254 bytes");
}

/// Above its 1 GiB floor `cbloom` lets a frame decode to 4096 times its
/// length. A type-1 frame of 1,040 coder blocks (266,280-odd bytes, above
/// 256 KiB, so the ratio is 4096 and not the floor's ⌈2^30/length⌉) that
/// decodes to exactly 4096 times its length (1.09 GB, above 1 GiB) is
/// read by `cbloom inspect` within that output, twice the frame and the
/// process's 32 MiB; the same frame declaring 8 more bits (one byte of
/// output more, the frame as long) is refused by `inspect` and `decode`
/// under a cap of twice the frame and 32 MiB, so before the filter is
/// allocated, naming `--max-expansion`.
#[cfg(target_os = "linux")]
#[test]
fn cbloom_holds_a_frame_above_its_floor_to_4096_times_its_length() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let block = a_254_byte_block();
    let full = 1040u64;
    // m = 8 · 4096 · length: settle the header's varints and the last
    // block's stream, which depend on m.
    let mut m = full * coder::BLOCK_BITS + 1;
    let at = loop {
        let f = standard_frame(full, &block, m);
        let want = 8 * 4096 * f.len() as u64;
        if want == m {
            break f;
        }
        m = want;
    };
    let len = at.len() as u64;
    let output = m / 8;
    assert!(len > 256 * 1024 && output == 4096 * len && output > FLOOR);
    let past = standard_frame(full, &block, m + 8);
    assert_eq!(
        past.len(),
        at.len(),
        "the same length, one byte more output"
    );
    let (apath, ppath) = (dir.join("at.cbf"), dir.join("past.cbf"));
    std::fs::write(&apath, &at).unwrap();
    std::fs::write(&ppath, &past).unwrap();

    let small = 2 * len + PROCESS;
    for cmd in [
        vec!["inspect", s(&ppath)],
        vec!["decode", s(&ppath), "-o", "/dev/null"],
    ] {
        let (o, rss) = run_capped(&cmd, small, dir);
        assert!(!o.status.success(), "{} read the frame past 4096x", cmd[0]);
        let e = stderr(&o);
        assert!(
            e.contains("expansion (output bytes per frame byte) = 4097 exceeds the limit 4096")
                && e.contains("--max-expansion"),
            "{}: {e}",
            cmd[0]
        );
        println!(
            "cbloom {} of {len} bytes declaring {} bytes: refused within {small} bytes; peak RSS {rss:?} KiB",
            cmd[0],
            output + 1
        );
    }
    let cap = output + 2 * len + PROCESS;
    let (o, rss) = run_capped(&["inspect", s(&apath)], cap, dir);
    assert!(
        o.status.success(),
        "cbloom inspect under {cap} bytes: {:?} {}",
        o.status,
        stderr(&o)
    );
    println!(
        "cbloom inspect of {len} bytes decoding to {output} (4096x): within {cap} bytes; \
         peak RSS {rss:?} KiB"
    );
}

/// `cbloom import --squid` of the largest digest Squid describes (a
/// 268,435,454-byte mask, `MAX_MASK_SIZE`: no header may declare more,
/// whatever the limits), its mask incompressible (fixed-seed random
/// bytes), so the frame it writes is raw, as long as the mask. It reads
/// the digest, holds the mask as the filter's words (and drops what it
/// read), and builds the frame after a coded attempt: at most 2.5 masks
/// at its peak under a copying allocator (tests/alloc_squid.rs; 2 where
/// realloc moves large blocks without a copy, as glibc's does). So the
/// command stays within 3.5 times the input and the process's 32 MiB;
/// with room for two copies only, it fails, so the cap measures it.
#[cfg(target_os = "linux")]
#[test]
fn cbloom_import_of_the_largest_squid_digest_holds_a_few_copies_of_it() {
    use compressed_bloom::kinds::squid::{SquidDigest, MAX_MASK_SIZE};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let head = *SquidDigest::new(u64::from(MAX_MASK_SIZE), 8)
        .unwrap()
        .cblock()
        .as_bytes();
    let mut digest = head.to_vec();
    digest.reserve(MAX_MASK_SIZE as usize);
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    while digest.len() < 128 + MAX_MASK_SIZE as usize {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        digest.extend_from_slice(&x.to_le_bytes());
    }
    digest.truncate(128 + MAX_MASK_SIZE as usize);
    let input = digest.len() as u64;
    let path = dir.join("big.digest");
    std::fs::write(&path, &digest).unwrap();
    drop(digest);
    let out = dir.join("big.cbf");
    let cap = 7 * input / 2 + PROCESS;
    let (o, rss) = run_capped(&["import", "--squid", s(&path), "-o", s(&out)], cap, dir);
    assert!(
        o.status.success(),
        "cbloom import under {cap} bytes: {:?} {}",
        o.status,
        stderr(&o)
    );
    let frame = std::fs::metadata(&out).unwrap().len();
    println!(
        "cbloom import --squid of {input} bytes: a {frame}-byte frame within {cap} bytes; peak RSS {rss:?} KiB"
    );
    assert!(frame > input, "the mask did not code: a raw frame");
    let (o, _) = run_capped(
        &["import", "--squid", s(&path), "-o", s(&out)],
        2 * input + PROCESS,
        dir,
    );
    assert!(!o.status.success(), "imported with room for two copies");
}
