//! BIP158 golden frames (docs/FORMAT.md sections 1.2, 6, 7 and 8.4,
//! "Scheme 3"), made by `tools/make_golden_bip158.sh` from Bitcoin Core's
//! vector blocks and a synthetic filter with a repeated value:
//! `tests/vectors/golden_bip158.txt` lists each frame's block hash and the
//! BIP158 bytes it holds. The crate must give those bytes back, frame each
//! filter to the same bytes, and refuse every corruption; the reference
//! decoder `tools/ref_kinds.py bip158`, written from FORMAT.md alone,
//! runs here too and must agree.

use compressed_bloom::bitcoin::Bip158Filter;
use compressed_bloom::kinds::bip158::encode_bip158;
use compressed_bloom::{decode_as, DecodeLimits};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A vector: name, block hash (internal order), BIP158 bytes, frame.
type Vector = (String, [u8; 32], Vec<u8>, Vec<u8>);

fn vectors() -> Vec<Vector> {
    std::fs::read_to_string(format!("{ROOT}/tests/vectors/golden_bip158.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let mut hash: [u8; 32] = unhex(f[1]).try_into().unwrap();
            hash.reverse();
            let frame = std::fs::read(format!("{ROOT}/tests/vectors/bip158_{}.cbf", f[0])).unwrap();
            (f[0].to_string(), hash, unhex(f[2]), frame)
        })
        .collect()
}

#[test]
fn golden_bip158_frames_hold_bitcoins_bytes() {
    let limits = DecodeLimits::default();
    let vectors = vectors();
    for (name, hash, bip158, frame) in &vectors {
        let f: Bip158Filter = decode_as(frame, &limits).unwrap();
        assert_eq!(f.block_hash(), hash, "{name}");
        assert_eq!(&f.to_bip158_bytes(), bip158, "{name}: export");
        let imported = Bip158Filter::from_bip158_bytes(*hash, bip158, &limits).unwrap();
        assert_eq!(
            &encode_bip158(&imported),
            frame,
            "{name}: the crate frames it anew"
        );
        // Every byte matters: a flipped bit anywhere is refused.
        for at in 0..frame.len() {
            let mut bad = frame.clone();
            bad[at] ^= 0x04;
            assert!(
                decode_as::<Bip158Filter>(&bad, &limits).is_err(),
                "{name}: byte {at}"
            );
        }
    }
    let repeats: usize = vectors
        .iter()
        .map(|(_, _, _, frame)| {
            decode_as::<Bip158Filter>(frame, &limits)
                .unwrap()
                .repeats()
                .len()
        })
        .sum();
    assert_eq!(
        (vectors.len(), repeats),
        (11, 1),
        "ten Core blocks and one repeat"
    );
}

#[test]
fn the_reference_decoder_agrees() {
    for (name, hash, bip158, _) in vectors() {
        let out = Command::new("python3")
            .arg(format!("{ROOT}/tools/ref_kinds.py"))
            .arg("bip158")
            .arg(format!("{ROOT}/tests/vectors/bip158_{name}.cbf"))
            .output()
            .expect("python3 runs the reference decoder (tools/test-deps.sh installs it)");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim(),
            format!("{} {}", hex(&hash), hex(&bip158)),
            "{name}"
        );
    }
}

/// FORMAT.md prints the genesis row's frame and its one script: the frame
/// is the golden file, and the script is its member at the position the
/// text gives.
#[test]
fn the_format_document_prints_the_genesis_frame_and_script() {
    let doc = std::fs::read_to_string(format!("{ROOT}/docs/FORMAT.md")).unwrap();
    let blocks: Vec<&str> = doc.split("```").map(str::trim).collect();
    let frame = blocks
        .iter()
        .find(|b| b.starts_with("cbf1030103"))
        .expect("the BIP158 frame");
    assert_eq!(
        unhex(frame),
        std::fs::read(format!("{ROOT}/tests/vectors/bip158_h0.cbf")).unwrap()
    );
    let script = blocks
        .iter()
        .find(|b| b.starts_with("4104678afdb0"))
        .expect("the genesis script");
    let f: Bip158Filter = decode_as(&unhex(frame), &DecodeLimits::default()).unwrap();
    assert!(f.contains(&unhex(script)));
    assert!(doc.contains("has position 769,941 in m = 784,931"));
    let mut k = [0u8; 16];
    k.copy_from_slice(&f.block_hash()[..16]);
    let k0 = u64::from_le_bytes(k[..8].try_into().unwrap());
    let k1 = u64::from_le_bytes(k[8..].try_into().unwrap());
    let s = compressed_bloom::hash::siphash24(k0, k1, &unhex(script));
    assert_eq!(((u128::from(s) * 784_931) >> 64) as u64, 769_941);
}
