//! The measurements behind docs/BENCHMARKS.md and docs/HARDENING.md: each
//! subcommand prints the markdown table the document shows under it.
//!
//! ```sh
//! cd benches/compare
//! cargo run --release -- compare     # sizes and speeds vs zstd, xz, brotli, arithmetic-coding
//! cargo run --release -- simulate    # the paper's Section III.A simulations (10,000 trials)
//! cargo run --release -- delta       # Section IV: delta sizes, and the m/n = 32 simulation
//! cargo run --release -- kinds       # bits per key at FPR 2^-8, 2^-16, 2^-20: every kind vs binary fuse and BIP158
//! cargo run --release -- ribbon      # the ribbon kind vs binary fuse, a Golomb-coded set and the sparse kind
//! cargo run --release -- counting    # the counting kind's bits per counter against the entropy
//! cargo run --release -- scalable    # what growing costs on the wire
//! cargo run --release -- squid       # Squid cache digests, compressed and re-planned
//! cargo run --release -- bip158      # BIP158 filters against the sparse kind's coding
//! cargo run --release -- stream      # format::stream on a 1 GiB filter: time and peak RSS
//! cargo run --release -- attack      # hostile frames against a 512 MiB subscriber (docs/HARDENING.md)
//! cargo run --release -- cond-apply  # conditional against plain delta apply time (docs/HARDENING.md)
//! cargo run --release -- grid [MAX_M] [coded|static]   # decode speed by density and size
//! ```
//!
//! `compare` needs the `zstd`, `xz` and `brotli` command-line tools (Debian
//! packages zstd, xz-utils, brotli). Bit arrays are Bloom filters of n keys
//! `i.to_le_bytes()` (seed 1), identical for every codec.

use compressed_bloom::coder;
use compressed_bloom::math::log2_binomial;
use compressed_bloom::{encode, BloomFilter, FilterParams};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

const CONFIGS: &[(u64, u64, u32)] = &[
    (10_000, 140_000, 2),
    (10_000, 480_000, 3),
    (10_000, 126_000, 2),
    (10_000, 80_000, 6),
    (10_000, 920_000, 1),
    (2_000_000, 28_000_000, 2),
    (10_000_000, 140_000_000, 2),
];

fn filter(n: u64, m: u64, k: u32, seed: u64) -> BloomFilter {
    let mut f = BloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
    for i in 0..n {
        f.insert(&i.to_le_bytes());
    }
    f
}

/// Best of `reps` wall-clock runs of `f`, in seconds.
fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..reps {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(v);
    }
    (best, out.unwrap())
}

/// Runs an external compressor through a pipe; returns (bytes, secs, secs).
fn external(
    args_c: &[&str],
    args_d: &[&str],
    data: &[u8],
    reps: usize,
) -> Option<(usize, f64, f64)> {
    let run = |args: &[&str], input: &[u8]| -> Option<Vec<u8>> {
        let mut child = Command::new(args[0])
            .args(&args[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut stdin = child.stdin.take()?;
        let input = input.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().ok()?;
        writer.join().ok()?.ok()?;
        out.status.success().then_some(out.stdout)
    };
    let (tc, packed) = best(reps, || run(args_c, data));
    let packed = packed?;
    let (td, back) = best(reps, || run(args_d, &packed));
    assert_eq!(back?.as_slice(), data, "{} round trip", args_c[0]);
    Some((packed.len(), tc, td))
}

mod attack;
mod cond_apply;
mod counting;
mod grid;
mod scalable;
mod bip158;
mod squid;
mod stream;

mod ac {
    //! The `arithmetic-coding` crate with the paper's appendix model: two
    //! counters starting at 1, P(bit) = C_bit / (C_0 + C_1).
    use arithmetic_coding::fixed_length;
    use arithmetic_coding::{Decoder, Encoder};
    use bitstream_io::{BigEndian, BitReader, BitWrite, BitWriter};
    use std::convert::Infallible;
    use std::ops::Range;

    #[derive(Clone)]
    pub struct Adaptive {
        c: [u64; 2],
        len: usize,
    }

    impl fixed_length::Model for Adaptive {
        type Symbol = bool;
        type ValueError = Infallible;
        type B = u64;
        fn probability(&self, s: &bool) -> Result<Range<u64>, Infallible> {
            Ok(if *s {
                self.c[0]..self.c[0] + self.c[1]
            } else {
                0..self.c[0]
            })
        }
        fn denominator(&self) -> u64 {
            self.c[0] + self.c[1]
        }
        fn max_denominator(&self) -> u64 {
            self.len as u64 + 2
        }
        fn symbol(&self, v: u64) -> bool {
            v >= self.c[0]
        }
        fn update(&mut self, s: &bool) {
            self.c[usize::from(*s)] += 1;
        }
        fn length(&self) -> usize {
            self.len
        }
    }

    pub fn encode(bits: &[bool]) -> Vec<u8> {
        let model = fixed_length::Wrapper::new(Adaptive {
            c: [1, 1],
            len: bits.len(),
        });
        let mut w = BitWriter::endian(Vec::new(), BigEndian);
        Encoder::new(model, &mut w)
            .encode_all(bits.iter().copied())
            .unwrap();
        w.byte_align().unwrap();
        w.into_writer()
    }

    pub fn decode(data: &[u8], len: usize) -> Vec<bool> {
        let model = fixed_length::Wrapper::new(Adaptive { c: [1, 1], len });
        let mut d = Decoder::new(model, BitReader::endian(data, BigEndian));
        d.decode_all().map(Result::unwrap).collect()
    }
}

/// One codec's result on one filter: bytes, and seconds to encode and
/// decode where timed.
struct Run {
    codec: String,
    bytes: usize,
    secs: Option<(f64, f64)>,
}

/// Sizes against the entropy bound (every configuration), then speeds (the
/// large filters, where a pipe's start-up does not dominate).
fn compare() {
    let mut results = Vec::new();
    for &(n, m, k) in CONFIGS {
        let f = filter(n, m, k, 1);
        let bytes = f.to_bytes();
        let big = m >= 10_000_000;
        let reps = if big { 10 } else { 20 };
        let mut runs = Vec::new();
        use compressed_bloom::coder::static_coded;
        for threads in [1usize, 2] {
            let (tc, payload) = best(reps, || {
                let mut out = Vec::new();
                coder::encode_with_threads(f.as_words(), m, &mut out, threads);
                out
            });
            let (td, words) = best(reps, || {
                let mut w = vec![0u64; f.as_words().len()];
                coder::decode_with_threads(&payload, m, &mut w, threads).unwrap();
                w
            });
            assert_eq!(words, f.as_words());
            runs.push(Run {
                codec: format!("type 1, {threads} thread(s)"),
                bytes: payload.len(),
                secs: Some((tc, td)),
            });
            // Format type 4 (static coded): one model per block.
            let (tc, payload) = best(reps, || {
                let mut out = Vec::new();
                static_coded::encode_with(
                    f.as_words(),
                    m,
                    &mut out,
                    threads,
                    static_coded::Choice::default(),
                );
                out
            });
            let (td, words) = best(reps, || {
                let mut w = vec![0u64; f.as_words().len()];
                static_coded::decode_with_threads(&payload, m, &mut w, threads).unwrap();
                w
            });
            assert_eq!(words, f.as_words());
            runs.push(Run {
                codec: format!("type 4, {threads} thread(s)"),
                bytes: payload.len(),
                secs: Some((tc, td)),
            });
        }
        let ext_reps = if big { 3 } else { 1 };
        for (name, c, d) in [
            (
                "zstd -3",
                vec!["zstd", "-3", "-T1", "-c", "-q"],
                vec!["zstd", "-d", "-T1", "-c", "-q"],
            ),
            (
                "zstd -19",
                vec!["zstd", "-19", "-T1", "-c", "-q"],
                vec!["zstd", "-d", "-T1", "-c", "-q"],
            ),
            (
                "xz -9e",
                vec!["xz", "-9e", "-T1", "-c"],
                vec!["xz", "-d", "-T1", "-c"],
            ),
            (
                "brotli -11",
                vec!["brotli", "-q", "11", "-c"],
                vec!["brotli", "-d", "-c"],
            ),
        ] {
            let (size, tc, td) = external(&c, &d, &bytes, ext_reps).unwrap_or_else(|| {
                panic!("{name} is not installed (Debian packages zstd, xz-utils, brotli)")
            });
            runs.push(Run {
                codec: name.into(),
                bytes: size,
                secs: Some((tc, td)),
            });
        }
        let bits: Vec<bool> = (0..m).map(|i| f.bit(i)).collect();
        let (tc, packed) = best(1, || ac::encode(&bits));
        let (td, back) = best(1, || ac::decode(&packed, bits.len()));
        assert_eq!(back, bits);
        runs.push(Run {
            codec: "arithmetic-coding 0.5".into(),
            bytes: packed.len(),
            secs: Some((tc, td)),
        });
        let frame = encode(&f);
        let frame = frame.len() - payload_len(&frame);
        results.push((n, m, k, f.count_ones(), frame, runs));
    }
    println!("Size over the entropy bound log2 C(m, x) (x ones), as a percentage; the payloads of types 1 and 4, the other codecs' whole output.");
    println!();
    println!("| n | m | k | density | bound (bytes) | type 1 | type 4 | zstd -19 | xz -9e | brotli -11 | arithmetic-coding | frame header + CRC (bytes) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (n, m, k, x, frame, runs) in &results {
        let bound = log2_binomial(*m, *x) / 8.0;
        let pct = |codec: &str| {
            let r = runs.iter().find(|r| r.codec == codec).unwrap();
            format!("{:+.3}%", (r.bytes as f64 / bound - 1.0) * 100.0)
        };
        println!(
            "| {n} | {m} | {k} | {:.4} | {bound:.1} | {} | {} | {} | {} | {} | {} | {frame} |",
            *x as f64 / *m as f64,
            pct("type 1, 1 thread(s)"),
            pct("type 4, 1 thread(s)"),
            pct("zstd -19"),
            pct("xz -9e"),
            pct("brotli -11"),
            pct("arithmetic-coding 0.5"),
        );
    }
    println!();
    println!("Speed on the largest filter, MB/s of uncompressed filter (m/8 bytes), best of 10 in process; zstd best of 3 through a pipe (process start-up and pipe copies included; xz, brotli and the arithmetic coder run at 0–8 MB/s encoding and 4–120 decoding).");
    println!();
    println!("| m | codec | encode MB/s | decode MB/s |");
    println!("|---|---|---|---|");
    for (_, m, _, _, _, runs) in results.iter().filter(|r| r.1 >= 100_000_000) {
        let mb = *m as f64 / 8e6;
        for r in runs
            .iter()
            .filter(|r| r.codec.starts_with("type") || r.codec.starts_with("zstd"))
        {
            let (tc, td) = r.secs.unwrap();
            println!("| {m} | {} | {:.0} | {:.0} |", r.codec, mb / tc, mb / td);
        }
    }
}

fn simulate() {
    const TRIALS: u64 = 10_000;
    println!("| n | m | k | trials | frame mean | frame sd | frame max | payload mean | payload max | paper mean / sd / max |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (m, k, paper) in [
        (140_000u64, 2u32, "9,920 / 11.4 / 9,971"),
        (480_000, 3, "19,805 / 14.4 / 19,865"),
        (126_000, 2, "9,493 / - / 9,539"),
    ] {
        let n = 10_000u64;
        let (mut sum, mut sum2, mut max, mut psum, mut pmax) = (0f64, 0f64, 0usize, 0f64, 0usize);
        for trial in 0..TRIALS {
            // A fresh random filter per trial: the seed changes the hash functions
            // (and, as a varint of 1-2 bytes, is part of the frame).
            let f = filter(n, m, k, trial);
            let frame = encode(&f);
            let header = frame.len() - payload_len(&frame);
            let len = frame.len();
            sum += len as f64;
            sum2 += (len * len) as f64;
            max = max.max(len);
            psum += (len - header) as f64;
            pmax = pmax.max(len - header);
        }
        let t = TRIALS as f64;
        let mean = sum / t;
        let sd = (sum2 / t - mean * mean).max(0.0).sqrt();
        println!(
            "| {n} | {m} | {k} | {TRIALS} | {mean:.1} | {sd:.1} | {max} | {:.1} | {pmax} | {paper} |",
            psum / t
        );
    }
}

/// Payload length from a frame's header.
fn payload_len(frame: &[u8]) -> usize {
    let h = compressed_bloom::inspect(frame, &compressed_bloom::DecodeLimits::unlimited()).unwrap();
    h.payload_len as usize
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("compare") => compare(),
        Some("simulate") => simulate(),
        Some("delta") => deltas(),
        Some("kinds") => kinds(),
        Some("ribbon") => ribbon(),
        Some("counting") => counting::run(),
        Some("scalable") => scalable::run(),
        Some("squid") => squid::run(),
        Some("bip158") => bip158::run(),
        Some("stream") => stream::run(),
        Some("stream-child") => stream::child(&args[2], &args[3]),
        Some("attack") => attack::run(),
        Some("attack-child") => attack::child(&args[2]),
        Some("cond-apply") => cond_apply::run(),
        Some("grid") => grid::run(&args[2..]),
        _ => {
            eprintln!("usage: compare | simulate | delta | kinds | ribbon | counting | scalable | squid | bip158 | stream | attack | cond-apply | grid [MAX_M] [coded|static]");
            std::process::exit(2);
        }
    }
}

/// Old filter: keys 0..n; new: keys cn..n+cn (a fraction c replaced).
fn delta_pair(n: u64, m: u64, k: u32, c: f64, seed: u64) -> (BloomFilter, BloomFilter) {
    let changed = (c * n as f64).round() as u64;
    let build = |lo: u64| {
        let mut f = BloomFilter::new(FilterParams::new(m, k, seed)).unwrap();
        for i in lo..lo + n {
            f.insert(&i.to_le_bytes());
        }
        f
    };
    (build(0), build(changed))
}

fn deltas() {
    use compressed_bloom::delta;
    use compressed_bloom::math::binary_entropy;
    let n = 10_000u64;
    let limits = Default::default();
    println!("| c | m/n | k | changed bits d | log2 C(m,d) B | formula m·H(q)/8 | plain coded B | vs bound | conditional bound B | conditional coded B | vs its bound | frame plain / conditional / sent |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for c in [0.05, 0.01] {
        for (bpk, k) in [(8u64, 5u32), (12, 3), (32, 2), (13, 2), (16, 3), (48, 2)] {
            let m = bpk * n;
            let (a, b) = delta_pair(n, m, k, c, 1);
            let plain = delta::encode_delta_plain(&a, &b).unwrap();
            let cond = delta::encode_delta_conditional(&a, &b).unwrap();
            let sent = delta::encode_delta(&a, &b).unwrap();
            let ps = delta::summarize(&plain, &limits).unwrap();
            let cs = delta::summarize(&cond, &limits).unwrap();
            let d = ps.changed_bits();
            let bound = log2_binomial(m, d) / 8.0;
            // Coded bytes after the digests (for the conditional delta this
            // includes its two layout varints).
            let coded = |f: &[u8]| payload_len_any(f) - delta::DIGESTS_LEN;
            let (pc, cc) = (coded(&plain), coded(&cond));
            let cbound = cs.entropy_bits() / 8.0;
            let p = (-(f64::from(k)) * n as f64 / m as f64).exp();
            let q = 2.0 * p * (1.0 - p.powf(c));
            let formula = m as f64 * binary_entropy(q) / 8.0;
            println!(
                "| {c} | {bpk} | {k} | {d} | {bound:.1} | {formula:.1} | {pc} | {:+.1} B | {cbound:.1} | {cc} | {:+.1} B | {} / {} / **{}** |",
                pc as f64 - bound,
                cc as f64 - cbound,
                plain.len(),
                cond.len(),
                sent.len()
            );
        }
    }
    const TRIALS: u64 = 10_000;
    let (m, k, c) = (32 * n, 2u32, 0.05);
    let mut sent = Stats::default();
    let mut plain = Stats::default();
    let mut plain_coded = Stats::default();
    let mut cond_types = 0u64;
    for trial in 0..TRIALS {
        let (a, b) = delta_pair(n, m, k, c, trial);
        let frame = delta::encode_delta(&a, &b).unwrap();
        if frame[3] == 3 {
            cond_types += 1;
        }
        sent.add(frame.len());
        let p = delta::encode_delta_plain(&a, &b).unwrap();
        plain.add(p.len());
        plain_coded.add(payload_len_any(&p) - delta::DIGESTS_LEN);
    }
    println!();
    println!("| m/n | k | c | trials | what | mean | sd | max |");
    println!("|---|---|---|---|---|---|---|---|");
    for (what, s) in [
        ("delta frame sent (encode_delta), all overhead", &sent),
        ("plain delta frame (type 2), all overhead", &plain),
        ("plain coded xor only (the paper's quantity)", &plain_coded),
    ] {
        println!(
            "| 32 | 2 | 0.05 | {TRIALS} | {what} | {:.1} | {:.1} | {} |",
            s.mean(),
            s.sd(),
            s.max
        );
    }
    println!("| | | | | paper: compressed delta | 2,090 | - | 2,129 |");
    println!("| | | | | formula m·H(q)/8 | 2,076 | - | - |");
    println!();
    println!("conditional type sent in {cond_types} of {TRIALS} trials");
}

#[derive(Default)]
struct Stats {
    n: u64,
    sum: f64,
    sum2: f64,
    max: usize,
}

impl Stats {
    fn add(&mut self, v: usize) {
        self.n += 1;
        self.sum += v as f64;
        self.sum2 += (v * v) as f64;
        self.max = self.max.max(v);
    }
    fn mean(&self) -> f64 {
        self.sum / self.n as f64
    }
    fn sd(&self) -> f64 {
        let m = self.mean();
        (self.sum2 / self.n as f64 - m * m).max(0.0).sqrt()
    }
}

fn payload_len_any(frame: &[u8]) -> usize {
    compressed_bloom::delta::inspect_delta(frame, &compressed_bloom::DecodeLimits::unlimited())
        .unwrap()
        .frame
        .payload_len as usize
}

/// Transmitted bits per key at a target false-positive rate: the best plan
/// of each kind of this crate (built from n keys and encoded: measured frame
/// sizes), a standard Bloom filter sent raw, a binary fuse filter (xorf,
/// measured), and a Golomb-coded set with BIP158's construction (computed
/// from its specification). False-positive rates are measured on 10^7
/// non-members where that gives at least a few hits.
fn kinds() {
    use compressed_bloom::kinds::partitioned::encode_partitioned;
use compressed_bloom::kinds::sparse::encode_sparse;
    use compressed_bloom::kinds::{partitioned::PartitionedBloomFilter, sparse::SparseFilter};
    use compressed_bloom::plan::kinds::{plan_partitioned_for_fpr, plan_sparse_for_fpr};
    use compressed_bloom::plan::{fpr_finite, plan_for_fpr, Constraints};
    use xorf::{BinaryFuse16, BinaryFuse32, BinaryFuse8, Filter};

    let n = 1_000_000u64;
    let queries = 10_000_000u64;
    let key = |i: u64| format!("member:{i}");
    let stranger = |i: u64| format!("stranger:{i}");
    // Filters held as m bits are capped at 1 GiB of memory (2^33 bits);
    // the sparse kind holds positions and needs no cap.
    let capped = Constraints {
        max_m: 1 << 33,
        ..Constraints::default()
    };
    let free = Constraints::default();
    let measure = |contains: &dyn Fn(&[u8]) -> bool| -> f64 {
        let hits = (0..queries)
            .filter(|&i| contains(stranger(i).as_bytes()))
            .count();
        hits as f64 / queries as f64
    };
    let bpk = |bytes: usize| bytes as f64 * 8.0 / n as f64;
    println!("n = {n} keys, FPR measured on {queries} non-members");
    println!("| target f | filter | k | bits per key sent | f (formula) | f (measured) |");
    println!("|---|---|---|---|---|---|");
    for b in [8u32, 16, 20] {
        let f = 0.5f64.powi(b as i32);
        let row = |name: &str, k: String, bits: f64, formula: f64, measured: Option<f64>| {
            let m = measured.map_or("-".to_string(), |v| format!("{v:.3e}"));
            println!("| 2^-{b} | {name} | {k} | {bits:.2} | {formula:.3e} | {m} |");
        };
        let measurable = f * queries as f64 >= 5.0;
        // Standard Bloom filter, k = round(log2(1/f)), smallest m, sent raw.
        let k_std = b;
        let mut lo = n;
        while fpr_finite(lo * 2, n, k_std) > f {
            lo *= 2;
        }
        let (mut l, mut h) = (lo, lo * 2);
        while h - l > 1 {
            let mid = (l + h) / 2;
            if fpr_finite(mid, n, k_std) <= f {
                h = mid
            } else {
                l = mid
            }
        }
        let raw_bits = bpk(h.div_ceil(8) as usize + 20);
        row(
            "standard Bloom, uncompressed",
            k_std.to_string(),
            raw_bits,
            fpr_finite(h, n, k_std),
            None,
        );
        // This crate: standard compressed, partitioned, sparse.
        if let Ok(p) = plan_for_fpr(n, f, &capped) {
            let mut flt = BloomFilter::new(FilterParams::new(p.m, p.k, 1)).unwrap();
            for i in 0..n {
                flt.insert(key(i).as_bytes());
            }
            let frame = encode(&flt);
            let meas = measurable.then(|| measure(&|q| flt.contains(q)));
            row(
                "compressed standard (this crate, m <= 2^33)",
                p.k.to_string(),
                bpk(frame.len()),
                p.fpr,
                meas,
            );
        }
        if let Ok(p) = plan_partitioned_for_fpr(n, f, &capped) {
            let mut flt = PartitionedBloomFilter::new(FilterParams::new(p.m, p.k, 1)).unwrap();
            for i in 0..n {
                flt.insert(key(i).as_bytes());
            }
            let frame = encode_partitioned(&flt);
            let meas = measurable.then(|| measure(&|q| flt.contains(q)));
            row(
                "compressed partitioned (this crate, m <= 2^33)",
                p.k.to_string(),
                bpk(frame.len()),
                p.fpr,
                meas,
            );
        }
        if let Ok(p) = plan_sparse_for_fpr(n, f, &free) {
            let flt =
                SparseFilter::from_keys(FilterParams::new(p.m, p.k, 1), (0..n).map(key)).unwrap();
            let frame = encode_sparse(&flt);
            let meas = measurable.then(|| measure(&|q| flt.contains(q)));
            row(
                "sparse (this crate)",
                p.k.to_string(),
                bpk(frame.len()),
                p.fpr,
                meas,
            );
        }
        // Binary fuse filters: fingerprints of 8, 16 or 32 bits.
        let hashes: Vec<u64> = (0..n).map(|i| xxhash_like(key(i).as_bytes())).collect();
        let fuse_measure = |contains: &dyn Fn(u64) -> bool| -> f64 {
            let hits = (0..queries)
                .filter(|&i| contains(xxhash_like(stranger(i).as_bytes())))
                .count();
            hits as f64 / queries as f64
        };
        match b {
            8 => {
                let fl = BinaryFuse8::try_from(&hashes).unwrap();
                let meas = fuse_measure(&|h| fl.contains(&h));
                row(
                    "binary fuse 8 (xorf)",
                    "-".into(),
                    bpk(fl.fingerprints.len()),
                    1.0 / 256.0,
                    Some(meas),
                );
            }
            16 => {
                let fl = BinaryFuse16::try_from(&hashes).unwrap();
                let meas = fuse_measure(&|h| fl.contains(&h));
                row(
                    "binary fuse 16 (xorf)",
                    "-".into(),
                    bpk(fl.fingerprints.len() * 2),
                    0.5f64.powi(16),
                    Some(meas),
                );
            }
            _ => {
                let fl = BinaryFuse32::try_from(&hashes).unwrap();
                row(
                    "binary fuse 32 (xorf; no 20-bit variant)",
                    "-".into(),
                    bpk(fl.fingerprints.len() * 4),
                    0.5f64.powi(32),
                    None,
                );
            }
        }
        // Golomb-coded set (BIP158's construction): hashes mapped to
        // [0, n·M) with M = 1/f, sorted gaps Golomb-Rice coded with
        // parameter P. Gaps are geometric with mean M, so a gap costs
        // P + 1 + c/(1 − c) bits, c = exp(−2^P / M); the best integer P.
        let mm = 1.0 / f;
        let gcs = (0..=40)
            .map(|p: i32| {
                let c = (-(2f64.powi(p)) / mm).exp();
                f64::from(p) + 1.0 + c / (1.0 - c)
            })
            .fold(f64::INFINITY, f64::min);
        row(
            "Golomb-coded set (BIP158 construction, computed)",
            "-".into(),
            gcs,
            f,
            None,
        );
    }
    // BIP158's own parameters.
    let c = (-(2f64.powi(19)) / 784_931.0).exp();
    println!(
        "\nBIP158 (P = 19, M = 784931): {:.2} bits per key at f = 1/784931 = 2^-{:.2}",
        19.0 + 1.0 + c / (1.0 - c),
        784_931f64.log2()
    );
}

/// Static sets of 10^6 keys at f = 2^-8, 2^-12, 2^-16, 2^-20 and 0.01: the
/// ribbon kind against xorf's binary fuse filters, a Golomb-coded set
/// (BIP158's construction, size computed) and this crate's sparse kind.
/// Bits per key are of the whole frame (xorf: its fingerprint array);
/// f is measured on 10^7 non-members; build times start from key hashes
/// (XXH3-128 for this crate, its low half for xorf), query times include
/// hashing the key (best of 3 runs for build and decode).
fn ribbon() {
    use compressed_bloom::kinds::ribbon::decode_ribbon;
use compressed_bloom::kinds::sparse::decode_sparse;
use compressed_bloom::kinds::ribbon::encode_ribbon;
use compressed_bloom::kinds::sparse::encode_sparse;
    use compressed_bloom::kinds::ribbon::{Build, RibbonFilter};
    use compressed_bloom::kinds::sparse::SparseFilter;
    use compressed_bloom::plan::kinds::plan_sparse_for_fpr;
    use compressed_bloom::plan::Constraints;
    use compressed_bloom::{DecodeLimits, KeyHash};
    use xorf::{BinaryFuse16, BinaryFuse32, BinaryFuse8, Filter};

    let n = 1_000_000u64;
    let queries = 10_000_000u64;
    let key = |i: u64| format!("member:{i}");
    let strangers: Vec<String> = (0..queries).map(|i| format!("stranger:{i}")).collect();
    let hashes: Vec<KeyHash> = (0..n).map(|i| KeyHash::new(key(i).as_bytes(), 1)).collect();
    let fuse_hashes: Vec<u64> = (0..n).map(|i| xxhash_like(key(i).as_bytes())).collect();
    let lim = DecodeLimits::unlimited();
    let bpk = |bytes: usize| bytes as f64 * 8.0 / n as f64;
    // (hits, ns per query) over the strangers.
    let probe = |contains: &dyn Fn(&[u8]) -> bool| -> (f64, f64) {
        let t = Instant::now();
        let hits = strangers.iter().filter(|q| contains(q.as_bytes())).count();
        let ns = t.elapsed().as_secs_f64() * 1e9 / queries as f64;
        (hits as f64 / queries as f64, ns)
    };
    let ms = |s: f64| format!("{:.1}", s * 1e3);
    println!("n = {n} keys, f measured on {queries} non-members; times on one thread");
    println!("| target f | filter | bits per key sent | log2(1/f) | f (expected) | f (measured) | build ms | decode ms | query ns |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let targets: [(&str, f64); 5] = [
        ("2^-8", 0.5f64.powi(8)),
        ("2^-12", 0.5f64.powi(12)),
        ("2^-16", 0.5f64.powi(16)),
        ("2^-20", 0.5f64.powi(20)),
        ("0.01", 0.01),
    ];
    for (label, f) in targets {
        let row = |name: &str,
                   bits: f64,
                   expected: f64,
                   meas: Option<f64>,
                   build: String,
                   decode: String,
                   query: String| {
            let m = meas.map_or("-".to_string(), |v| format!("{v:.3e}"));
            println!(
                "| {label} | {name} | {bits:.3} | {:.3} | {expected:.3e} | {m} | {build} | {decode} | {query} |",
                (1.0 / f).log2()
            );
        };
        let measurable = f * queries as f64 >= 5.0;
        // Ribbon, both ways of building it.
        for (name, how) in [
            ("ribbon (this crate)", Build::Compact),
            ("ribbon --fast (this crate)", Build::Fast),
        ] {
            let (tb, flt) = best(3, || {
                RibbonFilter::from_hashes_with(&hashes, f, 1, how).unwrap()
            });
            let frame = encode_ribbon(&flt);
            let (td, back) = best(3, || decode_ribbon(&frame, &lim).unwrap());
            assert_eq!(back, flt);
            assert!(hashes.iter().all(|&h| flt.contains_hash(h)));
            let (meas, qns) = probe(&|q| flt.contains(q));
            row(
                name,
                bpk(frame.len()),
                flt.expected_fpr(),
                measurable.then_some(meas),
                ms(tb),
                ms(td),
                format!("{qns:.1}"),
            );
        }
        // Binary fuse: the smallest fingerprint that reaches f.
        let fuse = |bits: u32| -> (f64, f64, f64, f64) {
            let q = |contains: &dyn Fn(u64) -> bool| -> (f64, f64) {
                probe(&|k: &[u8]| contains(xxhash_like(k)))
            };
            match bits {
                8 => {
                    let (tb, fl) = best(3, || BinaryFuse8::try_from(&fuse_hashes).unwrap());
                    let (m, ns) = q(&|h| fl.contains(&h));
                    (bpk(fl.fingerprints.len()), m, tb, ns)
                }
                16 => {
                    let (tb, fl) = best(3, || BinaryFuse16::try_from(&fuse_hashes).unwrap());
                    let (m, ns) = q(&|h| fl.contains(&h));
                    (bpk(fl.fingerprints.len() * 2), m, tb, ns)
                }
                _ => {
                    let (tb, fl) = best(3, || BinaryFuse32::try_from(&fuse_hashes).unwrap());
                    let (m, ns) = q(&|h| fl.contains(&h));
                    (bpk(fl.fingerprints.len() * 4), m, tb, ns)
                }
            }
        };
        let fb = if f >= 1.0 / 256.0 {
            8
        } else if f >= 0.5f64.powi(16) {
            16
        } else {
            32
        };
        let (bits, m, tb, ns) = fuse(fb);
        let fexp = 0.5f64.powi(fb as i32);
        row(
            &format!("binary fuse {fb} (xorf)"),
            bits,
            fexp,
            (fexp * queries as f64 >= 5.0).then_some(m),
            ms(tb),
            "-".into(),
            format!("{ns:.1}"),
        );
        // Golomb-coded set: size computed as in `kinds`.
        let mm = 1.0 / f;
        let gcs = (0..=40)
            .map(|p: i32| {
                let c = (-(2f64.powi(p)) / mm).exp();
                f64::from(p) + 1.0 + c / (1.0 - c)
            })
            .fold(f64::INFINITY, f64::min);
        row(
            "Golomb-coded set (BIP158 construction, computed)",
            gcs,
            f,
            None,
            "-".into(),
            "-".into(),
            "-".into(),
        );
        // Sparse kind.
        if let Ok(p) = plan_sparse_for_fpr(n, f, &Constraints::default()) {
            let params = FilterParams::new(p.m, p.k, 1);
            let (tb, flt) = best(3, || {
                SparseFilter::from_keys(params, (0..n).map(key)).unwrap()
            });
            let frame = encode_sparse(&flt);
            let (td, _) = best(3, || decode_sparse(&frame, &lim).unwrap());
            let (meas, qns) = probe(&|q| flt.contains(q));
            row(
                "sparse (this crate; build hashes keys)",
                bpk(frame.len()),
                p.fpr,
                measurable.then_some(meas),
                ms(tb),
                ms(td),
                format!("{qns:.1}"),
            );
        }
    }
    // Build time against binary fuse 8, the yardstick at every rate, and
    // query time against the sparse kind: the measurements take turns,
    // seven rounds, and each keeps its best, so that a slow spell of the
    // machine falls on all of them alike. Queries: 10^6 of the strangers.
    println!();
    println!("Rounds taking turns, best of 7: build against binary fuse 8 (xorf), query (10^6 non-members) against the sparse kind");
    println!("| target f | ribbon build ms | --fast build ms | binary fuse 8 build ms | ribbon / BF8 | --fast / BF8 | ribbon query ns | --fast query ns | sparse query ns |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let few = &strangers[..1_000_000];
    let query_ns = |contains: &dyn Fn(&[u8]) -> bool| -> f64 {
        let t = Instant::now();
        let hits = few.iter().filter(|q| contains(q.as_bytes())).count();
        std::hint::black_box(hits);
        t.elapsed().as_secs_f64() * 1e9 / few.len() as f64
    };
    for (label, f) in targets {
        let compact_f = RibbonFilter::from_hashes_with(&hashes, f, 1, Build::Compact).unwrap();
        let fast_f = RibbonFilter::from_hashes_with(&hashes, f, 1, Build::Fast).unwrap();
        let p = plan_sparse_for_fpr(n, f, &Constraints::default()).unwrap();
        let sparse =
            SparseFilter::from_keys(FilterParams::new(p.m, p.k, 1), (0..n).map(key)).unwrap();
        let mut t = [f64::INFINITY; 6];
        for _ in 0..7 {
            let round = [
                best(1, || {
                    RibbonFilter::from_hashes_with(&hashes, f, 1, Build::Compact).unwrap()
                })
                .0,
                best(1, || {
                    RibbonFilter::from_hashes_with(&hashes, f, 1, Build::Fast).unwrap()
                })
                .0,
                best(1, || BinaryFuse8::try_from(&fuse_hashes).unwrap()).0,
                query_ns(&|q| compact_f.contains(q)),
                query_ns(&|q| fast_f.contains(q)),
                query_ns(&|q| sparse.contains(q)),
            ];
            for (b, r) in t.iter_mut().zip(round) {
                *b = b.min(r);
            }
        }
        println!(
            "| {label} | {} | {} | {} | {:.2} | {:.2} | {:.1} | {:.1} | {:.1} |",
            ms(t[0]),
            ms(t[1]),
            ms(t[2]),
            t[0] / t[2],
            t[1] / t[2],
            t[3],
            t[4],
            t[5]
        );
    }
}

/// A 64-bit key hash for the xorf filters (they take u64 keys): the low
/// half of the crate's XXH3-128 with seed 0.
fn xxhash_like(key: &[u8]) -> u64 {
    compressed_bloom::KeyHash::new(key, 0).h1
}
