//! The costs of hostile frames against a subscriber holding an
//! m = 2^32 filter (512 MiB): CPU time and peak RSS per frame byte. Each
//! scenario runs in a child process of its own, since peak RSS is per
//! process.

use compressed_bloom::{delta, encode, BloomFilter, DecodeLimits, FilterParams, Subscriber};
use std::time::Instant;

const M: u64 = 1 << 32;

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Resets the peak RSS (Linux: `5` to clear_refs) and returns the current
/// RSS, so [`vm_hwm_kib`] then reports the peak of what follows.
fn reset_peak() -> u64 {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    status_kib("VmRSS:")
}

fn vm_hwm_kib() -> u64 {
    status_kib("VmHWM:")
}

fn refix_crc(frame: &mut [u8]) {
    let body = frame.len() - 4;
    let crc = crc32c::crc32c(&frame[..body]);
    frame[body..].copy_from_slice(&crc.to_le_bytes());
}

/// Offset of the payload: the header's five varints after the fixed bytes
/// (the frames here are versions 1 and 2, without identity).
fn payload_at(frame: &[u8]) -> usize {
    let mut at = 6;
    for _ in 0..5 {
        while frame[at] & 0x80 != 0 {
            at += 1;
        }
        at += 1;
    }
    at
}

/// One scenario, in this process: prints `bytes seconds rss_kib outcome`.
pub fn child(scenario: &str) {
    let p = FilterParams::new(M, 1, 0);
    let limits = DecodeLimits {
        max_expansion: None,
        ..DecodeLimits::default()
    };
    let zero = BloomFilter::new(p).unwrap();
    match scenario {
        "wrong-base" => {
            // A subscriber holding an empty 2^32-bit filter, and a delta
            // that names another base: refused, state unchanged.
            let mut sub = Subscriber::<BloomFilter>::new(limits);
            sub.receive(&encode(&zero)).unwrap();
            // Header of a plain delta (type 2, version 1) for the held
            // parameters, two digests that name no held filter, one byte.
            let mut frame = vec![0xCB, 0xF1, 1, 2, 1, 0];
            for v in [0u64, M, 1, 0, 17] {
                compressed_bloom::format::varint::put(&mut frame, v);
            }
            frame.extend_from_slice(&[0x5A; 17]);
            frame.extend_from_slice(&[0; 4]);
            refix_crc(&mut frame);
            let before = reset_peak();
            let reps = 20;
            let t = Instant::now();
            for _ in 0..reps {
                assert!(sub.receive(&frame).is_err());
            }
            let per = t.elapsed().as_secs_f64() / f64::from(reps);
            let growth = vm_hwm_kib().saturating_sub(before);
            println!("{} {per} {growth} refused", frame.len());
        }
        "wrong-result" | "wrong-result-plain" => {
            // A conditional delta whose part 0 is all ones (every bit of an
            // empty base flips), with a wrong result digest.
            let ones = BloomFilter::from_bytes(p, 0, &vec![0xFF; (M / 8) as usize]).unwrap();
            let mut frame = if scenario == "wrong-result" {
                delta::encode_delta_conditional(&zero, &ones).unwrap()
            } else {
                delta::encode_delta_plain(&zero, &ones).unwrap()
            };
            drop(ones);
            let at = payload_at(&frame);
            frame[at + 8] ^= 1; // result digest
            refix_crc(&mut frame);
            let mut sub = Subscriber::<BloomFilter>::new(limits);
            sub.receive(&encode(&zero)).unwrap();
            drop(zero);
            let before = reset_peak();
            let t = Instant::now();
            let r = sub.receive(&frame);
            let secs = t.elapsed().as_secs_f64();
            assert!(r.is_err());
            let growth = vm_hwm_kib().saturating_sub(before);
            println!("{} {secs} {growth} refused", frame.len());
        }
        "expansion" => {
            // Blocks of 2^23 bits, alternately all zeros and all ones: a
            // few bytes each. Decoded under the default limits.
            let words = M / 64;
            let bytes: Vec<u8> = (0..words)
                .flat_map(|i| {
                    let w: u64 = if (i >> 17) % 2 == 1 { u64::MAX } else { 0 };
                    w.to_le_bytes()
                })
                .collect();
            let f = BloomFilter::from_bytes(p, 0, &bytes).unwrap();
            drop(bytes);
            let frame = encode(&f);
            drop(f);
            drop(zero);
            let before = reset_peak();
            let t = Instant::now();
            let r = compressed_bloom::decode(&frame, &DecodeLimits::default());
            let secs = t.elapsed().as_secs_f64();
            let growth = vm_hwm_kib().saturating_sub(before);
            let outcome = if r.is_ok() { "decoded" } else { "refused" };
            println!("{} {secs} {growth} {outcome}", frame.len());
        }
        other => {
            panic!("scenario {other}: wrong-base, wrong-result, wrong-result-plain or expansion")
        }
    }
}

pub fn run() {
    let exe = std::env::current_exe().unwrap();
    println!("| frame (scenario) | bytes | outcome | time per frame | per frame byte | peak RSS growth |");
    println!("|---|---|---|---|---|---|");
    for (scenario, what) in [
        ("wrong-base", "plain delta naming another base"),
        (
            "wrong-result",
            "conditional delta, part 0 all ones, wrong result digest",
        ),
        ("wrong-result-plain", "the same change as a plain delta"),
        (
            "expansion",
            "512 blocks of all zeros or all ones, full frame, default limits",
        ),
    ] {
        let out = std::process::Command::new(&exe)
            .args(["attack-child", scenario])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = String::from_utf8(out.stdout).unwrap();
        let f: Vec<&str> = line.split_whitespace().collect();
        let (bytes, secs, kib): (f64, f64, u64) = (
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
        );
        println!(
            "| {what} (`{scenario}`) | {bytes} | {} | {:.3} ms | {:.2} µs | {:.1} MiB |",
            f[3],
            secs * 1e3,
            secs * 1e6 / bytes,
            kib as f64 / 1024.0
        );
    }
}
