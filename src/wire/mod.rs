//! Wire primitives below both the coder and the frame format: LEB128
//! varints and the receiver's resource limits. Nothing here knows about
//! filters or frames, so `coder` and `format` both build on it without a
//! cycle (keys → hash → filter → kinds → coder → wire ← format).

// Decoding code: the panic lints are denied for this module tree in lib.rs.

pub mod compact_size;
pub mod crc;
pub mod kind_id;
pub mod limits;
pub mod varint;
