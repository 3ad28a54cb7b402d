//! BIP158 filters: the bytes Bitcoin sends against this crate's coding of
//! the same set. For each block of Bitcoin Core's vectors
//! (tests/data/blockfilters.json) and for synthetic blocks of 10^4 and
//! 10^5 distinct pay-to-witness-key-hash scripts: N, BIP158's bytes (N and
//! the Golomb-Rice codes), the sparse kind's payload for the same values
//! (its repeat count, the position count, its Rice parameter and gaps),
//! the whole frame (header, block hash record, payload, CRC), and the
//! entropy bound of the set, log2 C(N·M, N) bits.

use compressed_bloom::bitcoin::Bip158Filter;
use compressed_bloom::kinds::bip158::encode_bip158;
use compressed_bloom::math::log2_binomial;
use compressed_bloom::{format, DecodeLimits, Kind};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn row(label: &str, f: &Bip158Filter) {
    let bip158 = f.to_bip158_bytes().len();
    let frame = encode_bip158(f);
    let payload = format::inspect(&frame, &DecodeLimits::default()).unwrap().payload_len as usize;
    let frame = frame.len();
    let bound = log2_binomial(f.params().m, f.len()) / 8.0;
    let per = |b: usize| {
        if f.is_empty() {
            "-".to_string()
        } else {
            format!("{:.2}", b as f64 * 8.0 / f.len() as f64)
        }
    };
    println!(
        "| {label} | {} | {bip158} ({}) | {} ({}) | {frame} | {bound:.1} |",
        f.len(),
        per(bip158),
        payload,
        per(payload),
    );
}

pub fn run() {
    println!("| block | N | BIP158 bytes (bits per script) | sparse payload bytes (bits per script) | frame bytes | entropy bound (bytes) |");
    println!("|---|---|---|---|---|---|");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/blockfilters.json");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    for r in &json.as_array().unwrap()[1..] {
        let mut hash: [u8; 32] = unhex(r[1].as_str().unwrap()).try_into().unwrap();
        hash.reverse();
        let filter = unhex(r[5].as_str().unwrap());
        let f = Bip158Filter::from_bip158_bytes(hash, &filter, &DecodeLimits::default()).unwrap();
        assert_eq!(f.to_bip158_bytes(), filter);
        row(&format!("testnet {}", r[0]), &f);
    }
    for n in [10_000u64, 100_000] {
        // Distinct P2WPKH scripts (0x00 0x14 and a 20-byte hash) from a
        // fixed-seed xorshift.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let scripts: Vec<Vec<u8>> = (0..n)
            .map(|_| {
                let mut script = vec![0x00, 0x14];
                while script.len() < 22 {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    script.extend_from_slice(&s.to_le_bytes());
                }
                script.truncate(22);
                script
            })
            .collect();
        let f = Bip158Filter::from_scripts([0x5a; 32], &scripts, &Vec::<Vec<u8>>::new()).unwrap();
        row(&format!("synthetic, {n} P2WPKH scripts"), &f);
    }
}
