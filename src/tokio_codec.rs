//! A [`tokio_util::codec`] for frames (feature `tokio`): wrap a TCP stream
//! in `Framed::new(stream, FrameCodec::default())` and send and receive
//! whole, checked frames.
//!
//! * **Partial input** returns `Ok(None)`; once a frame's header is
//!   complete the codec reserves toward the frame's length at most
//!   [`RESERVE_AHEAD`] beyond the bytes received (a header alone does not
//!   make the receiver allocate its frame). The buffer grows as `Vec`
//!   grows, so its capacity may double: it stays under twice the bytes
//!   received plus twice [`RESERVE_AHEAD`], and under twice the frame
//!   (docs/HARDENING.md, "Streams").
//! * **Limits first.** Each header is parsed and checked against the
//!   codec's [`DecodeLimits`] (m, k, frame length, expansion, kinds) as soon
//!   as its bytes are there, before the payload is buffered: a peer that
//!   announces a 4 GiB frame is refused after a few bytes.
//! * **Checked frames.** A complete frame's CRC-32C is verified before it is
//!   returned; the payload is decoded by the caller ([`Frame::decode`], or
//!   [`crate::Subscriber::receive`] for a published stream, deltas
//!   included).
//! * **After a bad frame the stream is closed.** A frame that fails any
//!   check makes this and every later `decode` return an error: the codec
//!   never guesses where the next frame starts, so it is never silently
//!   misaligned. Reconnect (or start a new codec) to go on.

use crate::format::{self, header, Coding, DecodeError, DecodeLimits, FrameHeader};
use crate::kind::AnyFilter;
use crate::kind::{decode_as, Kind};
use bytes::{BufMut, Bytes, BytesMut};
use thiserror::Error;
use tokio_util::codec::{Decoder, Encoder};

internal! {
/// The most the codec reserves beyond the bytes buffered (1 MiB).
pub const RESERVE_AHEAD: usize = 1 << 20;
}

/// Why the codec failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CodecError {
    /// A frame failed a check (header, limits, checksum); the stream is
    /// closed from here on.
    #[error("bad frame at stream byte {offset}: {source}")]
    Frame {
        /// Bytes of the stream before the bad frame.
        offset: u64,
        /// What was wrong.
        source: DecodeError,
    },
    /// An earlier frame was bad; the codec takes no more input.
    #[error("the stream was closed after a bad frame at byte {offset}")]
    Closed {
        /// Where the bad frame started.
        offset: u64,
    },
    /// The stream ended inside a frame.
    #[error("the stream ended {buffered} bytes into a frame")]
    EndInsideFrame {
        /// Bytes of the unfinished frame.
        buffered: usize,
    },
    /// The transport failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// One checked frame: its parsed header and its bytes (CRC verified).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The parsed header.
    pub header: FrameHeader,
    /// The whole frame, header to CRC.
    pub bytes: Bytes,
}

impl Frame {
    /// Decodes a full frame of any kind (deltas are applied with
    /// [`crate::delta`] or a [`crate::Subscriber`] instead).
    ///
    /// # Errors
    /// As [`crate::decode_any`].
    pub fn decode(&self, limits: &DecodeLimits) -> Result<AnyFilter, DecodeError> {
        self.decode_as(limits)
    }

    /// Decodes a full frame of kind `F`.
    ///
    /// # Errors
    /// As [`crate::decode_as`].
    pub fn decode_as<F: Kind>(&self, limits: &DecodeLimits) -> Result<F, DecodeError> {
        decode_as(&self.bytes, limits)
    }
}

/// Frames a byte stream. See the module docs for what it checks and when.
#[derive(Clone, Debug, Default)]
pub struct FrameCodec {
    limits: DecodeLimits,
    /// Stream bytes consumed by returned frames.
    consumed: u64,
    /// Where a bad frame started, once one was seen.
    failed: Option<u64>,
}

impl FrameCodec {
    /// A codec that holds frames to `limits`.
    pub fn new(limits: DecodeLimits) -> Self {
        FrameCodec {
            limits,
            consumed: 0,
            failed: None,
        }
    }

    /// The limits frames are held to.
    pub fn limits(&self) -> &DecodeLimits {
        &self.limits
    }

    fn fail(&mut self, source: DecodeError) -> CodecError {
        self.failed = Some(self.consumed);
        CodecError::Frame {
            offset: self.consumed,
            source,
        }
    }
}

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, CodecError> {
        if let Some(offset) = self.failed {
            return Err(CodecError::Closed { offset });
        }
        if src.is_empty() {
            return Ok(None);
        }
        let h = match header::parse(src, &self.limits) {
            Ok(h) => h,
            // The header itself is not complete yet.
            Err(DecodeError::Truncated { .. }) => return Ok(None),
            Err(e) => return Err(self.fail(e)),
        };
        // parse() held frame_len to limits.max_frame_len.
        let total = usize::try_from(h.frame_len()).unwrap_or(usize::MAX);
        if src.len() < total {
            // Grow with what arrives, never far ahead of it: a header alone
            // must not make the receiver allocate its whole frame.
            src.reserve(total.saturating_sub(src.len()).min(RESERVE_AHEAD));
            return Ok(None);
        }
        let bytes = src.split_to(total).freeze();
        match format::inspect(&bytes, &self.limits) {
            Ok(header) => {
                self.consumed = self.consumed.saturating_add(total as u64);
                Ok(Some(Frame { header, bytes }))
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, CodecError> {
        match self.decode(src)? {
            Some(frame) => Ok(Some(frame)),
            None if src.is_empty() => Ok(None),
            None => Err(CodecError::EndInsideFrame {
                buffered: src.len(),
            }),
        }
    }
}

/// A filter of any kind, as its full frame with [`Coding::Auto`].
impl<F: Kind> Encoder<&F> for FrameCodec {
    type Error = CodecError;

    fn encode(&mut self, f: &F, dst: &mut BytesMut) -> Result<(), CodecError> {
        dst.put_slice(&f.encode_frame(Coding::Auto, None));
        Ok(())
    }
}

/// A frame encoded elsewhere (a [`crate::Publisher`]'s update, a delta),
/// sent as it is.
impl Encoder<Bytes> for FrameCodec {
    type Error = CodecError;

    fn encode(&mut self, frame: Bytes, dst: &mut BytesMut) -> Result<(), CodecError> {
        dst.put(frame);
        Ok(())
    }
}
