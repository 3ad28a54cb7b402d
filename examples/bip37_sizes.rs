//! What this crate's frames save on BIP37 `filterload` filters: for filters
//! sized as Bitcoin Core's `CBloomFilter(nElements, nFPRate, …)` sizes them
//! (an SPV wallet's filter), filled with some share of the elements they
//! were sized for, the `filterload` payload's bytes against the bytes of
//! the crate's frame of the same filter (`encode_bip37`: the smallest of
//! the format's codings, header, record and CRC included). Sizes only, no
//! timings; deterministic elements (20- and 33-byte strings, as a wallet's
//! hash160s and public keys).
//!
//! ```sh
//! cargo run --example bip37_sizes
//! ```
//!
//! Prints the markdown table of docs/BENCHMARKS.md, "BIP37 filterload
//! filters".

use compressed_bloom::bitcoin::Bip37Filter;
use compressed_bloom::kinds::bip37::encode_bip37;

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Element `i`: alternately a 20-byte and a 33-byte pseudo-random string.
fn element(i: u64) -> Vec<u8> {
    let mut s = i.wrapping_mul(0x2545_f491_4f6c_dd1d);
    let len = if i.is_multiple_of(2) { 20 } else { 33 };
    (0..len).map(|_| splitmix(&mut s) as u8).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("| nElements | fp rate | filterload bytes | nHashFuncs | elements in it | fill | frame bytes | frame / filterload |");
    println!("|---|---|---|---|---|---|---|---|");
    let rows: &[(u32, f64)] = &[
        (10, 0.001),
        (100, 0.001),
        (100, 0.0001),
        (500, 0.0005),
        (1000, 0.001),
        (1000, 0.0001),
        (1000, 0.00001),
        (20_000, 0.0001),
    ];
    for &(n, fp) in rows {
        for share in [1.0, 0.5, 0.1] {
            let mut f = Bip37Filter::with_capacity(n, fp, 0x5eed_1e55, 1)?;
            let inserted = (f64::from(n) * share).round() as u64;
            for i in 0..inserted {
                f.insert(&element(i));
            }
            let payload = f.to_filterload().len();
            let frame = encode_bip37(&f).len();
            println!(
                "| {n} | {fp} | {payload} | {} | {inserted} ({:.0}%) | {:.3} | {frame} | {:.3} |",
                f.hash_funcs(),
                share * 100.0,
                f.filter().fill_ratio(),
                frame as f64 / payload as f64
            );
        }
    }
    Ok(())
}
