//! The tokio codec (feature `tokio`): partial input, several frames per
//! read, limits enforced from the header before the payload arrives, a bad
//! frame closes the stream, and a round trip over real loopback sockets.
#![cfg(feature = "tokio")]

use bytes::{Bytes, BytesMut};
use compressed_bloom::encode_any;
use compressed_bloom::tokio_codec::{CodecError, FrameCodec};
use compressed_bloom::AnyFilter;
use compressed_bloom::{encode, BloomFilter, DecodeError, DecodeLimits, FilterParams};
use futures_util::{SinkExt, StreamExt};
use tokio_util::codec::{Decoder, Framed};

fn filter(n: u32, seed: u64) -> BloomFilter {
    let mut f = BloomFilter::new(FilterParams::new(20_000, 3, seed)).unwrap();
    for i in 0..n {
        f.insert(&i.to_le_bytes());
    }
    f
}

#[test]
fn byte_by_byte_then_several_at_once() {
    let frames: Vec<Vec<u8>> = (0..3)
        .map(|i| encode(&filter(1000 + i, u64::from(i))))
        .collect();
    let mut codec = FrameCodec::default();
    let mut buf = BytesMut::new();
    for (i, &b) in frames[0].iter().enumerate() {
        buf.extend_from_slice(&[b]);
        let got = codec.decode(&mut buf).unwrap();
        if i + 1 < frames[0].len() {
            assert!(got.is_none(), "a frame after {} bytes", i + 1);
        } else {
            let f = got.unwrap();
            assert_eq!(f.bytes, frames[0]);
            assert_eq!(
                f.decode(&DecodeLimits::default()).unwrap(),
                AnyFilter::Standard(filter(1000, 0))
            );
        }
    }
    assert!(buf.is_empty());
    buf.extend_from_slice(&frames[1]);
    buf.extend_from_slice(&frames[2]);
    buf.extend_from_slice(&frames[0][..10]);
    assert_eq!(codec.decode(&mut buf).unwrap().unwrap().bytes, frames[1]);
    assert_eq!(codec.decode(&mut buf).unwrap().unwrap().bytes, frames[2]);
    assert!(codec.decode(&mut buf).unwrap().is_none());
    assert_eq!(buf.len(), 10);
    // The stream ends inside that frame.
    assert!(matches!(
        codec.decode_eof(&mut buf),
        Err(CodecError::EndInsideFrame { buffered: 10 })
    ));
}

#[test]
fn limits_are_enforced_from_the_header_alone() {
    let big = encode(&filter(10, 1));
    let h = compressed_bloom::format::inspect(&big, &DecodeLimits::default()).unwrap();
    let mut codec = FrameCodec::new(DecodeLimits {
        max_m: 10_000,
        ..DecodeLimits::default()
    });
    // Only the header: refused before any payload arrived.
    let mut buf = BytesMut::from(&big[..h.header_len]);
    let err = codec.decode(&mut buf).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::Frame {
                offset: 0,
                source: DecodeError::LimitExceeded { .. }
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("m (bits)"), "{err}");
    // A header announcing a huge frame does not make the buffer grow to it.
    let mut codec = FrameCodec::default();
    // The header of a raw frame of m = 2^32 bits (512 MiB of payload),
    // within the default limits, and the first bytes of its payload.
    let mut raw_big = vec![0xCB, 0xF1, 1, 0, 1, 0];
    for v in [0u64, 1 << 32, 1, 0, 1 << 29] {
        compressed_bloom::format::varint::put(&mut raw_big, v);
    }
    raw_big.resize(64, 0);
    let mut buf = BytesMut::from(&raw_big[..]);
    assert!(codec.decode(&mut buf).unwrap().is_none());
    assert!(
        buf.capacity() <= 64 + compressed_bloom::tokio_codec::RESERVE_AHEAD + 64,
        "{}",
        buf.capacity()
    );
}

#[test]
fn a_corrupt_frame_closes_the_stream() {
    let good = encode(&filter(500, 2));
    let mut bad = good.clone();
    let last = bad.len() - 6;
    bad[last] ^= 0x10; // a payload byte: the CRC catches it
    let mut codec = FrameCodec::default();
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&good);
    buf.extend_from_slice(&bad);
    buf.extend_from_slice(&good);
    assert_eq!(codec.decode(&mut buf).unwrap().unwrap().bytes, good);
    let err = codec.decode(&mut buf).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::Frame {
                source: DecodeError::ChecksumMismatch { .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(&format!("byte {}", good.len())),
        "{err}"
    );
    // Closed: the good frame after it is not read.
    assert!(matches!(
        codec.decode(&mut buf),
        Err(CodecError::Closed { .. })
    ));
}

#[tokio::test]
async fn round_trip_over_loopback_tcp() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let filters: Vec<AnyFilter> = (0..5)
        .map(|i| AnyFilter::Standard(filter(2000 * (i + 1), u64::from(i))))
        .collect();
    let sent = filters.clone();
    let server = tokio::spawn(async move {
        let (sock, _) = listener.accept().await.unwrap();
        let mut framed = Framed::new(sock, FrameCodec::default());
        for f in &sent {
            framed.send(f).await.unwrap();
        }
        // A pre-encoded frame too.
        framed
            .send(Bytes::from(encode_any(&sent[0])))
            .await
            .unwrap();
    });
    let sock = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut framed = Framed::new(sock, FrameCodec::default());
    let mut got = Vec::new();
    while let Some(frame) = framed.next().await {
        got.push(frame.unwrap().decode(&DecodeLimits::default()).unwrap());
    }
    server.await.unwrap();
    assert_eq!(got.len(), 6);
    assert_eq!(&got[..5], &filters[..]);
    assert_eq!(got[5], filters[0]);
}
