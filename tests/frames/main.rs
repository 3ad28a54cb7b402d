//! Whole frames through every entry point: round trips over parameters and
//! densities, the slice, `Vec`, `Buf` and streamed APIs agreeing, the
//! block-by-block decoders behind `cbloom decode`, serde (feature `serde`)
//! and the tokio codec (feature `tokio`).

#[path = "../common/mod.rs"]
mod common;

mod roundtrip;
mod streamed;
mod tokio_codec;
mod with_serde;
