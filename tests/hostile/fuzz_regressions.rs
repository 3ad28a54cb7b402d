//! Inputs found by the fuzz targets, replayed through every entry point that
//! takes untrusted bytes. Each must produce an error, never a panic.

use compressed_bloom::{
    decode, decode_from_buf, delta, inspect, BloomFilter, DecodeError, DecodeLimits, FilterParams,
    Subscriber, SyncError,
};

fn replay(name: &str) -> Vec<DecodeError> {
    let path = format!("{}/tests/vectors/fuzz/{name}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read(path).unwrap();
    let mut errors = Vec::new();
    for limits in [DecodeLimits::default(), DecodeLimits::unlimited()] {
        errors.push(decode(&data, &limits).unwrap_err());
        errors.push(inspect(&data, &limits).unwrap_err());
        errors.push(delta::inspect_delta(&data, &limits).unwrap_err());
        let mut base = BloomFilter::new(FilterParams::new(4096, 3, 7)).unwrap();
        errors.push(delta::apply(&mut base, &data, &limits).unwrap_err());
        let mut buf = &data[..];
        errors.push(decode_from_buf(&mut buf, &limits).unwrap_err());
        assert_eq!(buf.len(), data.len(), "nothing consumed on error");
    }
    errors.push(decode(&data, &DecodeLimits::default()).unwrap_err());
    match <Subscriber>::default().receive(&data) {
        Err(SyncError::Decode(e)) => errors.push(e),
        other => panic!("the subscriber took a frame every decoder refuses: {other:?}"),
    }
    errors
}

/// A delta header whose payload_len varint is close to 2^64, so that
/// header + payload + CRC overflows u64 (an input of the apply_arbitrary
/// fuzz target): every entry point refuses the field.
#[test]
fn payload_len_overflow() {
    for e in replay("payload_len_overflow.bin") {
        assert!(
            matches!(
                e,
                DecodeError::InvalidField {
                    field: "payload_len",
                    ..
                }
            ),
            "{e}"
        );
    }
}
