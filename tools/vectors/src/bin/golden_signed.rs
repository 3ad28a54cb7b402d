//! Writes the signed golden frames (tests/vectors/signed_*.cbf,
//! docs/FORMAT.md section 6, tag 2) and golden_signed.txt, which names
//! the public key that verifies them. The key is Ed25519's from the
//! 32-byte secret 00 01 02 … 1f: a test key, public by design. Run by
//! `tools/make_golden_signed.sh`, which checks each signature with
//! tools/ref_kinds.py and tools/ref_ed25519.py (written from the
//! document and RFC 8032 alone). Golden vectors are a contract: rerun
//! only with a format change.

use compressed_bloom::delta::encode_delta_with_identity;
use compressed_bloom::ed25519_dalek::SigningKey;
use compressed_bloom::format::{encode_with_identity, sign_frame};
use compressed_bloom::{BloomFilter, FilterParams, UpdateId};

fn filter(n: u64) -> BloomFilter {
    let mut f = BloomFilter::new(FilterParams::new(2_000, 3, 7)).unwrap();
    for i in 1..=n {
        f.insert(format!("key-{i}").as_bytes());
    }
    f
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/vectors".into());
    let secret: [u8; 32] = core::array::from_fn(|i| i as u8);
    let key = SigningKey::from_bytes(&secret);
    let public: String = key
        .verifying_key()
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let id = |seq| UpdateId {
        stream: 1,
        epoch: 2,
        seq,
    };
    let (old, new) = (filter(100), filter(110));
    let full = sign_frame(&encode_with_identity(&old, id(3)), &key).unwrap();
    let delta = sign_frame(&encode_delta_with_identity(&old, &new, id(4)).unwrap(), &key).unwrap();
    let mut list = format!("# public key {public}\n# name frame_len\n");
    for (name, bytes) in [("signed_full", &full), ("signed_delta", &delta)] {
        std::fs::write(format!("{dir}/{name}.cbf"), bytes).unwrap();
        list.push_str(&format!("{name} {}\n", bytes.len()));
    }
    std::fs::write(format!("{dir}/golden_signed.txt"), &list).unwrap();
    print!("{list}");
}
