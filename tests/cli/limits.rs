//! The limits `cbloom` reads frames under: a memory floor (any frame may
//! decode to 1 GiB) that does not widen the work a frame may ask for
//! (docs/HARDENING.md, "Cost per frame byte").

use crate::process::{run, s, stderr};
use compressed_bloom::{CountingBloomFilter, FilterParams, Kind};

/// A counting filter of 2^16 counters, k = 4, with every counter at 15
/// (10^6 keys: about 61 increments per counter, so none stays below 15
/// but with a Poisson tail far under 2^-16).
fn all_fifteen() -> CountingBloomFilter {
    let mut f = CountingBloomFilter::new(FilterParams::new(1 << 16, 4, 3)).unwrap();
    for i in 0u32..1_000_000 {
        f.insert(&i.to_le_bytes());
    }
    assert_eq!(f.histogram()[15], 1 << 16);
    f
}

/// The memory floor lets a 1.5 KB frame decode to 1 GiB, but a counting
/// frame still gets 128 value decisions per frame byte: the all-15 frame
/// asks for 14 per counter, 917,504, about 600 per frame byte (21,770
/// decisions per byte were taken before). With `--max-expansion 0` (no
/// limits) it reads.
#[test]
fn the_memory_floor_does_not_raise_the_counting_work_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let f = all_fifteen();
    let frame = compressed_bloom::kinds::counting::encode_counting(&f);
    let path = dir.join("all15.cbf");
    std::fs::write(&path, &frame).unwrap();
    let budget = 128 * frame.len() as u64;
    let o = run(&["inspect", s(&path)]);
    assert!(
        !o.status.success(),
        "the all-15 frame was read: {}",
        crate::process::stdout(&o)
    );
    let e = stderr(&o);
    assert!(
        e.contains(&format!(
            "counting value decisions (14 or 15 per marked counter) = {}",
            14u64 << 16
        )) && e.contains(&format!("{budget} (raise it with --max-expansion)")),
        "{e}"
    );
    let o = run(&["inspect", s(&path), "--max-expansion", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A delta from the empty filter to it asks for 15 decisions per
    // counter, 983,040, from a frame of about 1.5 KB.
    let empty = CountingBloomFilter::new(FilterParams::new(1 << 16, 4, 3)).unwrap();
    let base = dir.join("empty.cbf");
    std::fs::write(
        &base,
        compressed_bloom::kinds::counting::encode_counting(&empty),
    )
    .unwrap();
    let delta = Kind::encode_delta(&empty, &f, None).unwrap();
    let dpath = dir.join("d.cbf");
    std::fs::write(&dpath, &delta).unwrap();
    let out = dir.join("out.cbf");
    let o = run(&["apply", s(&base), s(&dpath), "-o", s(&out)]);
    assert!(!o.status.success(), "the all-15 delta was applied");
    let e = stderr(&o);
    assert!(
        e.contains(&format!(
            "counting value decisions (14 or 15 per marked counter) = {}",
            15u64 << 16
        )),
        "{e}"
    );
    // The floor itself stays: an empty filter of 10^7 counters (6.25 MB
    // from a frame of a few dozen bytes, far past 4096 times) reads.
    let big = CountingBloomFilter::new(FilterParams::new(10_000_000, 4, 3)).unwrap();
    let bpath = dir.join("big.cbf");
    std::fs::write(
        &bpath,
        compressed_bloom::kinds::counting::encode_counting(&big),
    )
    .unwrap();
    let o = run(&["inspect", s(&bpath)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The ribbon shard table under `cbloom`: the largest frame the library's
/// default memory limit accepts (a 33,554,451-byte frame of 16,777,204
/// shards of no rows, counted as 16 bytes per payload byte, 512 MiB) is
/// read by `cbloom inspect` within what the limit counts, plus the frame
/// itself (read whole, at most twice its size while the read grows) and
/// 32 MiB for the process. Its data segment (the heap and private
/// writable mappings; Linux counts them under RLIMIT_DATA) is capped at
/// that sum with `ulimit -d`, so an allocation past it fails the command
/// (measured: 433,541 KiB needed; the address space, `ulimit -v`, also
/// holds reserved arenas and stacks, about 200 MB more). Before the
/// decoder held one shard record, it held 40 bytes per shard (671 MB).
#[cfg(unix)]
#[test]
fn cbloom_reads_the_largest_ribbon_shard_table_within_the_counted_memory() {
    use compressed_bloom::wire::varint;
    let empty = 16_777_203u64;
    let mut p = vec![128u8, 0];
    varint::put(&mut p, empty + 1);
    varint::put(&mut p, 128);
    p.push(0);
    p.resize(p.len() + 2 * empty as usize + 16, 0);
    let mut f = vec![0xCB, 0xF1, 3, 0, 1, 0, 5];
    for v in [0, 128, 1, 0, p.len() as u64] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(&p);
    f.extend_from_slice(&[0; 4]);
    crate::common::fix_crc(&mut f);
    assert_eq!(f.len(), 33_554_451);
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("shards.cbf");
    std::fs::write(&path, &f).unwrap();
    let cap_kb = (16 * p.len() as u64 + 2 * f.len() as u64 + (32 << 20)) / 1024;
    inspect_within(&path, cap_kb);
}

/// The memory floor's worst frame: a standard filter of one key in 2^33
/// bits (1 GiB) codes to a frame of about 23 KB, 45,000 times smaller
/// than it decodes to, and `cbloom inspect` reads it (the floor) within
/// 1 GiB, the frame twice and 32 MiB for the process, checked with a
/// data-segment cap (`ulimit -d`, as for the ribbon frame above). The
/// floor is the ratio ⌈2^30 / frame length⌉, so a frame may decode to
/// less than one frame length past 1 GiB: the same filter 128 KiB larger
/// is refused.
#[cfg(unix)]
#[test]
fn the_memory_floor_holds_at_one_gib() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = crate::process::keys(tmp.path(), "one.txt", ["only".to_string()]);
    let at = tmp.path().join("at.cbf");
    let past = tmp.path().join("past.cbf");
    for (m, out) in [(1u64 << 33, &at), ((1 << 33) + (1 << 20), &past)] {
        let o = run(&[
            "build",
            "--type",
            "standard",
            "--keys",
            s(&keys),
            "--m",
            &m.to_string(),
            "--k",
            "1",
            "-o",
            s(out),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let frame_len = std::fs::metadata(&at).unwrap().len();
    assert!(frame_len * 4096 < 1 << 30, "a frame of {frame_len} bytes");
    let cap_kb = ((1u64 << 30) + 2 * frame_len + (32 << 20)) / 1024;
    inspect_within(&at, cap_kb);
    let o = run(&["inspect", s(&past)]);
    assert!(!o.status.success(), "1 GiB + 128 KiB were read");
    assert!(
        stderr(&o).contains("expansion") && stderr(&o).contains("--max-expansion"),
        "{}",
        stderr(&o)
    );
}

/// Runs `cbloom inspect FRAME` with its data segment capped at `cap_kb`
/// KiB (`ulimit -d`), and asserts it succeeds: what it holds stays within
/// the cap.
fn inspect_within(frame: &std::path::Path, cap_kb: u64) {
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -d {cap_kb} && exec \"$0\" inspect \"$1\""))
        .arg(crate::process::BIN)
        .arg(s(frame))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cbloom inspect under {cap_kb} KiB: {:?} {}",
        o.status,
        stderr(&o)
    );
}
