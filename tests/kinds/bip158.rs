//! BIP158 basic filters against Bitcoin Core's test vectors,
//! `tests/data/blockfilters.json` (ten testnet blocks, each with its raw
//! block, the scripts its inputs spend, the previous filter header, the
//! filter and its header; see tests/data/README.md). Every row is checked
//! as a client and a server would: the filter built from the block's
//! scripts, import and export, the header chain, membership, and the
//! crate's frame.

use compressed_bloom::bitcoin::{Bip158Error, Bip158Filter};
use compressed_bloom::format::{self, FilterKind};
use compressed_bloom::{decode_any, decode_as, encode_any, AnyFilter, DecodeError, DecodeLimits};
use sha2::{Digest, Sha256};

fn unhex(s: &str) -> Vec<u8> {
    assert!(
        s.len().is_multiple_of(2),
        "odd-length hex in the vector file"
    );
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A hash as the JSON prints it (reversed) in internal byte order.
fn hash_from_display(s: &str) -> [u8; 32] {
    let mut h: [u8; 32] = unhex(s).try_into().unwrap();
    h.reverse();
    h
}

fn sha256d(data: &[u8]) -> [u8; 32] {
    Sha256::digest(Sha256::digest(data)).into()
}

/// A reader over a raw block, as Bitcoin serialises it.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = &self.data[self.at..self.at + n];
        self.at += n;
        s
    }
    fn byte(&mut self) -> u8 {
        self.take(1)[0]
    }
    fn compact(&mut self) -> usize {
        match self.byte() {
            0xfd => u16::from_le_bytes(self.take(2).try_into().unwrap()) as usize,
            0xfe => u32::from_le_bytes(self.take(4).try_into().unwrap()) as usize,
            0xff => u64::from_le_bytes(self.take(8).try_into().unwrap()) as usize,
            b => b as usize,
        }
    }
}

/// A block's hash (checked against the header), and the output scripts of
/// its transactions (checked by the merkle root over the txids).
fn parse_block(raw: &[u8]) -> ([u8; 32], Vec<Vec<u8>>) {
    let mut r = Reader { data: raw, at: 80 };
    let header = &raw[..80];
    let txs = r.compact();
    let mut outputs = Vec::new();
    let mut txids = Vec::new();
    for _ in 0..txs {
        let start = r.at;
        let mut stripped = r.take(4).to_vec();
        let segwit = r.data[r.at] == 0;
        if segwit {
            assert_eq!(r.take(2), [0, 1], "segwit marker and flag");
        }
        let body = r.at;
        let inputs = r.compact();
        for _ in 0..inputs {
            r.take(36);
            let len = r.compact();
            r.take(len + 4);
        }
        let outs = r.compact();
        for _ in 0..outs {
            r.take(8);
            let len = r.compact();
            outputs.push(r.take(len).to_vec());
        }
        stripped.extend_from_slice(&raw[body..r.at]);
        if segwit {
            for _ in 0..inputs {
                for _ in 0..r.compact() {
                    let len = r.compact();
                    r.take(len);
                }
            }
        }
        stripped.extend_from_slice(r.take(4));
        assert!(r.at > start);
        txids.push(sha256d(&stripped));
    }
    assert_eq!(
        r.at,
        raw.len(),
        "the block has bytes after its transactions"
    );
    let mut level = txids;
    while level.len() > 1 {
        if level.len() % 2 == 1 {
            level.push(*level.last().unwrap());
        }
        level = level
            .chunks(2)
            .map(|p| sha256d(&[p[0], p[1]].concat()))
            .collect();
    }
    assert_eq!(level[0], header[36..68], "merkle root");
    (sha256d(header), outputs)
}

struct Row {
    height: u64,
    block_hash: [u8; 32],
    block: Vec<u8>,
    spent: Vec<Vec<u8>>,
    prev_header: [u8; 32],
    filter: Vec<u8>,
    header: [u8; 32],
}

fn rows() -> Vec<Row> {
    let path = format!(
        "{}/tests/data/blockfilters.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let rows = json.as_array().unwrap();
    rows.iter()
        .skip(1) // the column names
        .map(|r| {
            let s = |i: usize| r[i].as_str().unwrap();
            Row {
                height: r[0].as_u64().unwrap(),
                block_hash: hash_from_display(s(1)),
                block: unhex(s(2)),
                spent: r[3]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| unhex(v.as_str().unwrap()))
                    .collect(),
                prev_header: hash_from_display(s(4)),
                filter: unhex(s(5)),
                header: hash_from_display(s(6)),
            }
        })
        .collect()
}

/// Bitcoin Core's ten rows: the filter built from the block's scripts is
/// Core's byte for byte, import then export gives the bytes back, the
/// header chains, and every script BIP158 takes from the block is a
/// member (a block without one answers false).
#[test]
fn bitcoin_core_block_filter_vectors() {
    let rows = rows();
    let limits = DecodeLimits::default();
    let mut checked = 0;
    for row in &rows {
        let (hash, outputs) = parse_block(&row.block);
        assert_eq!(hash, row.block_hash, "height {}: block hash", row.height);
        let built = Bip158Filter::from_scripts(hash, &outputs, &row.spent).unwrap();
        assert_eq!(
            built.to_bip158_bytes(),
            row.filter,
            "height {}: built filter",
            row.height
        );
        let imported = Bip158Filter::from_bip158_bytes(hash, &row.filter, &limits).unwrap();
        assert_eq!(imported, built, "height {}", row.height);
        assert_eq!(
            imported.to_bip158_bytes(),
            row.filter,
            "height {}: export",
            row.height
        );
        assert_eq!(
            imported.filter_header(&row.prev_header),
            row.header,
            "height {}: filter header",
            row.height
        );
        let members: Vec<&Vec<u8>> = outputs
            .iter()
            .filter(|s| !s.is_empty() && s[0] != 0x6a)
            .chain(row.spent.iter().filter(|s| !s.is_empty()))
            .collect();
        for script in &members {
            assert!(
                imported.contains(script),
                "height {}: member {script:02x?}",
                row.height
            );
        }
        if members.is_empty() {
            assert!(imported.is_empty());
            assert!(
                !imported.contains(b""),
                "height {}: an empty filter",
                row.height
            );
        }
        // Through the crate's frame: the same filter, the same bytes.
        let frame = encode_any(&AnyFilter::from(imported.clone()));
        let back: Bip158Filter = decode_as(&frame, &limits).unwrap();
        assert_eq!(back, imported);
        assert!(
            matches!(decode_any(&frame, &limits).unwrap(), AnyFilter::Bip158(f) if f == imported)
        );
        let h = format::inspect(&frame, &limits).unwrap();
        assert_eq!(
            (h.kind, h.block_hash, h.n),
            (FilterKind::Sparse, Some(hash), imported.len())
        );
        checked += 1;
    }
    // Rows 2 and 3 are consecutive blocks: the chain links them.
    let (two, three) = (&rows[1], &rows[2]);
    assert_eq!((two.height, three.height), (2, 3));
    assert_eq!(three.prev_header, two.header);
    eprintln!("bip158 vectors: {checked} rows checked");
    assert_eq!(checked, 10, "Bitcoin Core's file has ten blocks");
}

/// A frame under scheme 3 holds what BIP158 needs: a frame whose record or
/// m disagrees is refused at the header.
#[test]
fn scheme_3_frames_are_refused_when_they_break_its_rules() {
    let rows = rows();
    let row = &rows[4]; // ten scripts
    let f = Bip158Filter::from_bip158_bytes(row.block_hash, &row.filter, &DecodeLimits::default())
        .unwrap();
    let frame = encode_any(&AnyFilter::from(f));
    let limits = DecodeLimits::default();
    // The sparse decoder refuses it: its key is the block's.
    assert!(matches!(
        decode_as::<compressed_bloom::kinds::sparse::SparseFilter>(&frame, &limits),
        Err(DecodeError::InvalidField {
            field: "hash scheme",
            ..
        })
    ));
    // A corrupted n makes m disagree with N · 784931.
    let h = format::inspect(&frame, &limits).unwrap();
    assert_eq!(h.n, 10);
    let mut bad = frame.clone();
    let n_at = frame.windows(2).position(|w| w == [1, 10]).unwrap() + 1; // k = 1, n = 10
    bad[n_at] = 11;
    crate::common::fix_crc(&mut bad);
    assert!(matches!(
        format::inspect(&bad, &limits),
        Err(DecodeError::InvalidField { field: "m", .. })
    ));
}

/// Hostile BIP158 bytes are refused with a typed error, in one pass over
/// the input and with memory bounded by the input.
#[test]
fn hostile_bip158_bytes_are_refused() {
    let limits = DecodeLimits::default();
    let import = |b: &[u8]| Bip158Filter::from_bip158_bytes([3; 32], b, &limits);
    // N promises more values than the bytes hold (20 bits each at least).
    assert_eq!(
        import(&[0xfe, 0, 0, 0, 2, 0xff]),
        Err(Bip158Error::TooManyElements {
            n: 1 << 25,
            limit: 0
        })
    );
    assert!(matches!(
        import(&[0xfe, 1, 0, 0, 2]),
        Err(Bip158Error::TooManyElements { n, limit }) if n == (1 << 25) + 1 && limit == 1 << 25
    ));
    // A unary run the length of the input stops at the range, not the end.
    let mut run = vec![1u8];
    run.extend(std::iter::repeat_n(0xff, 1 << 20));
    assert!(matches!(
        import(&run),
        Err(Bip158Error::ValueOutOfRange { index: 0, .. })
    ));
    // Truncated inside the remainder.
    // (N = 2 in 40 bits: the first value takes 22, the second needs 20.)
    assert!(matches!(
        import(&[2, 0xc0, 0, 0, 0, 0]),
        Err(Bip158Error::Truncated { index: 1, .. })
    ));
    // A whole byte after the last value; non-zero padding.
    assert_eq!(
        import(&[1, 0, 0, 0, 0]),
        Err(Bip158Error::TrailingData { bytes: 1 })
    );
    assert_eq!(import(&[1, 0, 0, 1]), Err(Bip158Error::NonZeroPadding));
    assert_eq!(import(&[0, 0]), Err(Bip158Error::TrailingData { bytes: 1 }));
    // Non-canonical N.
    assert!(matches!(
        import(&[0xfd, 1, 0]),
        Err(Bip158Error::BadCompactSize { .. })
    ));
    assert!(matches!(
        import(&[]),
        Err(Bip158Error::BadCompactSize { .. })
    ));
    // A value at or past N · M: one value of 784931 (q = 1, low = 259555).
    let v = 784_931u64;
    let mut bits = String::from("10");
    bits.push_str(&format!("{:019b}", v & ((1 << 19) - 1)));
    while bits.len() % 8 != 0 {
        bits.push('0');
    }
    let mut bytes = vec![1u8];
    bytes.extend(
        (0..bits.len())
            .step_by(8)
            .map(|i| u8::from_str_radix(&bits[i..i + 8], 2).unwrap()),
    );
    assert!(matches!(
        import(&bytes),
        Err(Bip158Error::ValueOutOfRange {
            index: 0,
            range: 784_931
        })
    ));
}

/// The importer reads each bit of the stream once: its work is at most 8
/// reads per input byte whatever the input, and a refusal stops where the
/// input broke a rule.
#[test]
fn bip158_import_reads_each_bit_at_most_once() {
    use compressed_bloom::kinds::bip158::import_work;
    let limits = DecodeLimits::default();
    let mut run = vec![1u8];
    run.extend(std::iter::repeat_n(0xff, 1 << 20));
    // 2^16 values of difference 0 (all repeats), and a real block's filter.
    let mut zeros = vec![0xfe, 0, 0, 1, 0];
    zeros.extend(std::iter::repeat_n(0u8, (1 << 16) * 20 / 8));
    let rows = rows();
    let cases: [(&str, &[u8]); 5] = [
        ("a unary run of 1 MiB", &run),
        ("N beyond the bytes", &[0xfe, 0, 0, 0, 2, 0xff]),
        ("2^16 zero differences", &zeros),
        ("truncated", &[2, 0xc0, 0, 0, 0, 0]),
        ("a block's filter", &rows[5].filter),
    ];
    for (what, input) in cases {
        let (result, reads) = import_work([9; 32], input, &limits);
        let bound = 8 * input.len() as u64;
        eprintln!(
            "{what}: {} bytes, {reads} bit reads, {:?}",
            input.len(),
            result.as_ref().map(|f| f.len())
        );
        assert!(
            reads <= bound,
            "{what}: {reads} reads for {} bytes",
            input.len()
        );
    }
    // The unary run stops once it passes the range: two bits, not 2^23.
    assert_eq!(import_work([9; 32], &run, &limits).1, 2);
    assert_eq!(
        import_work([9; 32], &zeros, &limits)
            .0
            .unwrap()
            .repeats()
            .len(),
        (1 << 16) - 1
    );
}
