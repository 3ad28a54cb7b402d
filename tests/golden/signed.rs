//! Signed golden frames (docs/FORMAT.md section 6, tag 2), made by
//! `tools/make_golden_signed.sh` and checked there by
//! `tools/ref_kinds.py verify`, whose Ed25519 (`tools/ref_ed25519.py`) is
//! written from RFC 8032 alone. The crate must verify them with the
//! listed key, sign the same frames to the same bytes (Ed25519 signatures
//! are deterministic), refuse every single-bit flip, and read them as the
//! unsigned frames; the reference verifier runs here too.

use compressed_bloom::delta::encode_delta_with_identity;
use compressed_bloom::ed25519_dalek::{SigningKey, VerifyingKey};
use compressed_bloom::format::{encode_with_identity, sign_frame, verify_frame};
use compressed_bloom::{apply_delta, decode, BloomFilter, DecodeLimits, FilterParams, UpdateId};
use std::process::Command;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");

fn filter(n: u64) -> BloomFilter {
    let mut f = BloomFilter::new(FilterParams::new(2_000, 3, 7)).unwrap();
    for i in 1..=n {
        f.insert(format!("key-{i}").as_bytes());
    }
    f
}

fn id(seq: u64) -> UpdateId {
    UpdateId {
        stream: 1,
        epoch: 2,
        seq,
    }
}

/// The listed public key, and each vector's name and bytes.
fn vectors() -> (String, Vec<(String, Vec<u8>)>) {
    let list = std::fs::read_to_string(format!("{DIR}/golden_signed.txt")).unwrap();
    let public = list
        .lines()
        .find_map(|l| l.strip_prefix("# public key "))
        .unwrap()
        .to_string();
    let frames = list
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next().unwrap().to_string();
            let len: usize = f.next().unwrap().parse().unwrap();
            let bytes = std::fs::read(format!("{DIR}/{name}.cbf")).unwrap();
            assert_eq!(bytes.len(), len, "{name}");
            (name, bytes)
        })
        .collect();
    (public, frames)
}

fn verifying_key(hex: &str) -> VerifyingKey {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    VerifyingKey::from_bytes(&bytes.try_into().unwrap()).unwrap()
}

#[test]
fn signed_vectors_verify_and_sign_to_the_same_bytes() {
    let (public, frames) = vectors();
    assert_eq!(frames.len(), 2);
    let key = SigningKey::from_bytes(&core::array::from_fn(|i| i as u8));
    assert_eq!(key.verifying_key(), verifying_key(&public));
    let limits = DecodeLimits::default();
    let (old, new) = (filter(100), filter(110));
    for (name, bytes) in &frames {
        let h = verify_frame(bytes, &[key.verifying_key()], &limits).unwrap();
        assert_eq!(
            h.signer.unwrap(),
            key.verifying_key().as_bytes()[..8],
            "{name}"
        );
        let remade = match name.as_str() {
            "signed_full" => encode_with_identity(&old, id(3)),
            "signed_delta" => encode_delta_with_identity(&old, &new, id(4)).unwrap(),
            other => panic!("unlisted vector {other}"),
        };
        assert_eq!(&sign_frame(&remade, &key).unwrap(), bytes, "{name}");
    }
    // Read as the unsigned frames: the filter, then the delta applied to it.
    let mut f = decode(&frames[0].1, &limits).unwrap();
    assert_eq!(f, old);
    apply_delta(&mut f, &frames[1].1, &limits).unwrap();
    assert_eq!(f, new);
}

#[test]
fn every_bit_flip_of_a_signed_vector_is_refused() {
    let (public, frames) = vectors();
    let keys = [verifying_key(&public)];
    let limits = DecodeLimits::default();
    for (name, bytes) in &frames {
        for bit in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(
                verify_frame(&b, &keys, &limits).is_err(),
                "{name}: bit {bit} flipped still verifies"
            );
        }
    }
}

#[test]
fn the_reference_verifier_agrees() {
    let (public, frames) = vectors();
    let root = env!("CARGO_MANIFEST_DIR");
    for (name, _) in &frames {
        let run = |key: &str| {
            Command::new("python3")
                .arg(format!("{root}/tools/ref_kinds.py"))
                .args(["verify", &format!("{DIR}/{name}.cbf"), key])
                .output()
                .expect("python3 runs the reference verifier (tools/test-deps.sh installs it)")
        };
        let ok = run(&public);
        assert!(
            ok.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
        // Another key with the same id would be tried; another id is refused.
        let other = SigningKey::from_bytes(&[9; 32]);
        let other: String = other
            .verifying_key()
            .as_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let refused = run(&other);
        assert!(
            !refused.status.success(),
            "{name}: verified with another key"
        );
    }
}

#[test]
fn the_format_document_prints_the_signed_delta_and_its_key() {
    // FORMAT.md section 7 prints the frame and the public key, so that a
    // decoder written from the document can check a signature.
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/FORMAT.md")).unwrap();
    let (public, frames) = vectors();
    let (_, delta) = frames.iter().find(|(n, _)| n == "signed_delta").unwrap();
    let at = doc
        .find("A signed frame (section 6, tag 2)")
        .expect("section 7 names it");
    let section = &doc[at..];
    assert!(section.contains(&public), "the public key is printed");
    let start = section.find("```\n").unwrap() + 4;
    let end = start + section[start..].find("```").unwrap();
    let printed: String = section[start..end].split_whitespace().collect();
    let hex: String = delta.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(printed, hex);
}
