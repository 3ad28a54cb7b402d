//! The costs of hostile frames against a subscriber holding an
//! m = 2^32 filter (512 MiB): CPU time and peak RSS per frame byte. Run each
//! scenario in its own process, since peak RSS is per process:
//!
//! ```sh
//! cargo run --release --example attack_costs -- wrong-base
//! cargo run --release --example attack_costs -- wrong-result
//! cargo run --release --example attack_costs -- wrong-result-plain
//! cargo run --release --example attack_costs -- expansion
//! ```
//!
//! Uses only API that format versions 2 and 3 of the crate share, so the
//! same file measures the tree before and after the fixes
//! (docs/HARDENING.md, "Cost").

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

fn main() {
    let scenario = std::env::args().nth(1).unwrap_or_default();
    let p = FilterParams::new(M, 1, 0);
    let limits = DecodeLimits {
        max_expansion: None,
        ..DecodeLimits::default()
    };
    let zero = BloomFilter::new(p).unwrap();
    match scenario.as_str() {
        "wrong-base" => {
            // A subscriber holding an empty 2^32-bit filter, and a delta
            // that names another base: refused, state unchanged.
            let mut sub = Subscriber::new(limits);
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
            println!(
                "wrong-base: frame {} bytes, {:.3} ms per frame, {:.1} us per frame byte, RSS growth {} KiB",
                frame.len(),
                per * 1e3,
                per * 1e6 / frame.len() as f64,
                vm_hwm_kib().saturating_sub(before)
            );
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
            let mut sub = Subscriber::new(limits);
            sub.receive(&encode(&zero)).unwrap();
            drop(zero);
            let before = reset_peak();
            let t = Instant::now();
            let r = sub.receive(&frame);
            let secs = t.elapsed().as_secs_f64();
            assert!(r.is_err());
            println!(
                "{scenario}: frame {} bytes, {:.3} s per frame, {:.1} us per frame byte, RSS growth {} MiB",
                frame.len(),
                secs,
                secs * 1e6 / frame.len() as f64,
                vm_hwm_kib().saturating_sub(before) / 1024
            );
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
            let r = compressed_bloom::decode_with_limits(&frame, &DecodeLimits::default());
            let secs = t.elapsed().as_secs_f64();
            let held = r.as_ref().map_or(0, |f| f.m() / 8);
            println!(
                "expansion: frame {} bytes, {} under default limits, {:.3} s, output {} MiB = {:.0} x the frame, RSS growth {} MiB",
                frame.len(),
                if r.is_ok() { "decoded" } else { "refused" },
                secs,
                held >> 20,
                held as f64 / frame.len() as f64,
                vm_hwm_kib().saturating_sub(before) / 1024
            );
        }
        _ => eprintln!("usage: attack_costs wrong-base|wrong-result|wrong-result-plain|expansion"),
    }
}
