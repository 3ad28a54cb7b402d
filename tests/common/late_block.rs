//! Frames with a valid CRC whose payload no encoder made: what only a
//! faulty or hostile encoder sends, and what the decoders must refuse
//! block by block.

use compressed_bloom::coder::static_coded::Choice;
use compressed_bloom::{format, BloomFilter};

/// `body` (a frame without its CRC) with its CRC-32C appended.
pub fn with_crc(mut body: Vec<u8>) -> Vec<u8> {
    let crc = crc32c::crc32c(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// `f` as a type-4 frame of 2^16-bit blocks, and the same frame with a byte
/// of its last block's stream (the last block ends the payload) changed and
/// the CRC made valid again.
pub fn good_and_bad_last_block(f: &BloomFilter) -> (Vec<u8>, Vec<u8>) {
    let choice = Choice {
        block_log: Some(16),
        mode: None,
    };
    let good = format::encode_static_with(f, choice);
    let body = good.len() - 4;
    let mut bad = good[..body].to_vec();
    bad[body - 3] ^= 0x40;
    (good, with_crc(bad))
}
