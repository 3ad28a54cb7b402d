//! Frames through `std::io`, for filters too large to hold twice: the
//! encoder writes a frame without building it in memory, and the decoder
//! reads one into the output filter without holding the frame.
//!
//! **Working memory** beyond the filter (the encoder's input, the
//! decoder's output) is at most `STREAM_READ_MEMORY` (2.5 MiB) for the decoder
//! and `STREAM_WRITE_MEMORY` (16 MiB) for the encoder, plus 8 bytes per 2^23-bit coder
//! block (the block table): one block's coded stream, the coder's tables
//! (the encoder's per-block scratch is the larger), the header and an I/O
//! buffer. `tests/alloc_stream.rs` checks both with a counting allocator.
//! A static-coded frame (type 4) is read the same way, but its blocks are
//! as large as its encoder chose (up to 2^40 bits): the decoder holds its
//! block table (at most one entry per two payload bytes) and one block's
//! stream, which is at most the payload, so at most the frame the limits
//! allow.
//!
//! The encoder makes two passes over the filter when it codes it: the
//! first measures each block's coded length (the header declares the
//! payload length before the payload), the second writes. It falls back to
//! the raw type, as [`encode`](super::encode) does, when coding would not
//! shrink the payload.
//!
//! The decoder checks the header and the limits before it allocates the
//! filter, decodes block by block as the bytes arrive, and verifies the
//! CRC-32C at the end, *after* decoding (the frame is never held whole):
//! a corrupt frame costs at most the decoding work the limits allow, and
//! nothing is returned unless the checksum matches. It reads exactly the
//! frame's bytes, so frames can follow one another on a stream.

use super::header::{self, FilterKind, FilterType, HeaderFields};
use super::{DecodeError, DecodeLimits};
use crate::coder::{self, BLOCK_BITS};
use crate::filter::{
    check_packed, padding_is_clear, with_le_bytes, words_from_le_bytes, zeroed_words, BloomFilter,
};
use crate::wire::varint;
use std::io::{self, Read, Write};
use thiserror::Error;

internal! {
/// Bytes of working memory [`read_frame`] uses beyond the filter and 8
/// bytes per coder block, for type-1 frames whose blocks code to at most
/// a raw block plus 64 KiB (a Bloom filter's array, close to random, codes
/// well below that; a contrived array can code a block larger, and then
/// its stream, read as it arrives and never past the payload, is what is
/// held): one block's
/// coded stream, the coder's 32 KiB table, a 64 KiB I/O buffer and the
/// header: 2.5 MiB with room to spare. The filter itself is allocated as
/// the header declares it (within the limits) once ⌈m/8⌉/4096 bytes of
/// payload have arrived ([`PREFIX_EXPANSION`]; those bytes are held until
/// the frame's end, and count in this allowance: 128 KiB at m = 2^32).
pub const STREAM_READ_MEMORY: usize = 2_621_440;
}

// Two blocks' bytes and 512 KiB (a literal: the decoding lints refuse
// arithmetic in an item the `internal!` macro writes).
const _: () = assert!(STREAM_READ_MEMORY == (BLOCK_BITS / 8) as usize * 2 + 512 * 1024);

internal! {
/// Bytes of working memory [`write_frame`] uses beyond the filter and 8
/// bytes per coder block: the block coder's scratch for one 2^23-bit block
/// (its operation list, about 9 MB at the densest), one coded block and a
/// 64 KiB buffer: 16 MiB with room to spare.
pub const STREAM_WRITE_MEMORY: usize = 16 << 20;
}

internal! {
/// [`read_frame`] allocates the filter once the payload has brought one
/// byte per this many bytes of it: the default expansion limit, so a frame
/// within it has that many bytes, and the reader holds at most ⌈m/8⌉/4096
/// bytes of payload before the filter (128 KiB for m = 2^32). A frame the
/// expansion floor admits may be shorter: the filter is then allocated
/// once its whole payload has arrived.
pub const PREFIX_EXPANSION: u64 = crate::wire::limits::DEFAULT_MAX_EXPANSION;
}

/// I/O chunk for raw payloads.
const CHUNK: usize = 64 * 1024;
// Raw chunks start on word boundaries (read_frame relies on it).
const _: () = assert!(CHUNK.is_multiple_of(8));

/// Why a streamed frame could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The frame is invalid (as [`super::decode`] would say).
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The reader failed (or ended inside the frame: `UnexpectedEof`), or,
    /// for the functions that write, the writer failed.
    #[error("frame I/O: {0}")]
    Io(#[from] io::Error),
}

/// A writer that keeps the CRC-32C of what passes through.
struct CrcWriter<W> {
    inner: W,
    crc: u32,
    written: u64,
}

impl<W: Write> CrcWriter<W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.written = self.written.saturating_add(bytes.len() as u64);
        self.inner.write_all(bytes)
    }
}

/// Writes `filter` as one frame (a standard filter: coded if that is
/// smaller, raw otherwise; the same bytes as [`super::encode`]). Returns
/// the bytes written.
///
/// # Errors
/// The writer's.
pub fn write_frame<W: Write>(filter: &BloomFilter, w: W) -> io::Result<u64> {
    let p = *filter.params();
    let words = filter.as_words();
    // Pass 1: each block's coded length, one block in memory at a time.
    let mut scratch = Default::default();
    let mut stream = Vec::new();
    let mut lens = Vec::new();
    for (w0, bits) in coder::block_spans(p.m) {
        stream.clear();
        coder::encode_one_block(words, w0, bits, &mut stream, &mut scratch);
        lens.push(stream.len() as u64);
    }
    let (table, last) = lens.split_at(lens.len().saturating_sub(1));
    let mut table_bytes = Vec::with_capacity(table.len().saturating_mul(4));
    for &l in table {
        varint::put(&mut table_bytes, l);
    }
    let coded_len = lens
        .iter()
        .fold(table_bytes.len() as u64, |a, &l| a.saturating_add(l));
    let _ = last;
    if coded_len >= p.byte_len() {
        return write_raw_frame(filter, w);
    }
    let fields = HeaderFields::plain(FilterType::Coded);
    write_framed(w, &fields, &p, filter.len(), coded_len, |out| {
        // Pass 2: the block table, then each block again.
        out.put(&table_bytes)?;
        for (w0, bits) in coder::block_spans(p.m) {
            stream.clear();
            coder::encode_one_block(words, w0, bits, &mut stream, &mut scratch);
            out.put(&stream)?;
        }
        Ok(())
    })
}

/// Writes a frame with header `fields` for an array of parameters `params`
/// holding `n` keys, whose `payload_len`-byte payload `payload` puts, then
/// the CRC-32C of it all; returns the bytes written.
fn write_framed<W: Write, E: From<io::Error>>(
    w: W,
    fields: &HeaderFields,
    params: &crate::FilterParams,
    n: u64,
    payload_len: u64,
    payload: impl FnOnce(&mut CrcWriter<W>) -> Result<(), E>,
) -> Result<u64, E> {
    let mut head = Vec::with_capacity(64);
    header::write(&mut head, fields, params, n, payload_len);
    let mut out = CrcWriter {
        inner: w,
        crc: 0,
        written: 0,
    };
    out.put(&head)?;
    payload(&mut out)?;
    let crc = out.crc;
    out.inner.write_all(&crc.to_le_bytes())?;
    Ok(out.written.saturating_add(4))
}

/// Hands the packed array (⌈m/8⌉ bytes: little-endian words, the last cut)
/// to `put`, without a copy of the array ([`with_le_bytes`]).
fn put_bits(filter: &BloomFilter, put: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
    let len = usize::try_from(filter.params().byte_len()).unwrap_or(usize::MAX);
    with_le_bytes(filter.as_words(), len, put)
}

/// Writes the packed bit array of `filter` (the bytes of
/// [`BloomFilter::to_bytes`]) without making a copy of it; returns the
/// bytes written.
///
/// # Errors
/// The writer's.
pub fn write_bits<W: Write>(filter: &BloomFilter, mut w: W) -> io::Result<u64> {
    put_bits(filter, |bytes| w.write_all(bytes))?;
    Ok(filter.params().byte_len())
}

/// Writes `filter` as a raw (uncoded) frame, the bytes of
/// [`encode_as`](super::encode_as) with [`FilterType::Raw`], without
/// making a copy of the array; returns the bytes written.
///
/// # Errors
/// The writer's.
pub fn write_raw_frame<W: Write>(filter: &BloomFilter, w: W) -> io::Result<u64> {
    let len = filter.params().byte_len();
    let fields = HeaderFields::plain(FilterType::Raw);
    write_framed(w, &fields, filter.params(), filter.len(), len, |out| {
        put_bits(filter, |bytes| out.put(bytes))
    })
}

internal! {
/// Writes a counting filter as a raw frame (type 0, kind 1; the bytes of
/// [`encode_counting_raw`](super::encode_counting_raw)) without a copy of
/// its counters: what `cbloom decode` writes for the counting kind.
/// Returns the bytes written.
///
/// # Errors
/// The writer's.
pub fn write_counting_raw_frame<W: Write>(
    filter: &crate::CountingBloomFilter,
    w: W,
) -> io::Result<u64> {
    let p = filter.params();
    let len = crate::kinds::counting::raw_len(p.m);
    let fields = HeaderFields::of_kind(FilterKind::Counting, FilterType::Raw);
    write_framed(w, &fields, p, filter.len(), len, |out| {
        put_counters(filter, |bytes| out.put(bytes))
    })
}
}

internal! {
/// Writes a counting filter's counters, two per byte, low nibble first
/// (the ⌈m/2⌉ bytes of its raw payload), without a copy of them; returns
/// the bytes written.
///
/// # Errors
/// The writer's.
pub fn write_counters<W: Write>(filter: &crate::CountingBloomFilter, mut w: W) -> io::Result<u64> {
    put_counters(filter, |bytes| w.write_all(bytes))?;
    Ok(crate::kinds::counting::raw_len(filter.params().m))
}
}

/// Hands a counting filter's ⌈m/2⌉ counter bytes to `put`, without a copy.
fn put_counters(
    filter: &crate::CountingBloomFilter,
    put: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let len = crate::kinds::counting::raw_len(filter.params().m);
    with_le_bytes(filter.as_words(), usize::try_from(len).unwrap_or(usize::MAX), put)
}

/// A reader that keeps the CRC-32C of what it read.
struct CrcReader<R> {
    inner: R,
    crc: u32,
    read: u64,
}

impl<R: Read> CrcReader<R> {
    fn take(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_exact(buf)?;
        self.crc = crc32c::crc32c_append(self.crc, buf);
        self.read = self.read.saturating_add(buf.len() as u64);
        Ok(())
    }

    /// Runs `parse` over the reader's next bytes, one at a time, as a
    /// table parser takes them. The reader's own failure ends the bytes
    /// (`None`, as the payload's end would) and is returned as itself,
    /// before whatever `parse` made of the shortened input.
    fn parse_bytes<T>(
        &mut self,
        parse: impl FnOnce(&mut dyn FnMut() -> Option<u8>) -> T,
    ) -> io::Result<T> {
        let mut io_error = None;
        let parsed = parse(&mut || {
            let mut b = [0u8; 1];
            match self.take(&mut b) {
                Ok(()) => Some(b[0]),
                Err(e) => {
                    io_error = Some(e);
                    None
                }
            }
        });
        io_error.map_or(Ok(parsed), Err)
    }

    /// Reads `len` bytes into `buf` (replacing what it held), which grows
    /// as they arrive (`Read::read_to_end`, which does not zero the
    /// capacity it reuses): a declared length that the input does not hold
    /// costs no more memory than the input did.
    fn take_vec(&mut self, buf: &mut Vec<u8>, len: u64) -> io::Result<()> {
        buf.clear();
        let got = (&mut self.inner).take(len).read_to_end(buf)?;
        if got as u64 != len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.crc = crc32c::crc32c_append(self.crc, buf);
        self.read = self.read.saturating_add(len);
        Ok(())
    }
}

/// Reads a static-coded payload (type 4) into `words`: first the whole
/// block table, checked as the in-memory decoder checks it (one parser,
/// `coder::static_coded::parse_table`, reading a byte at a time and never
/// past the payload); then each block's stream into one buffer, decoded
/// before the next is read. Memory: the table (at most one entry per two
/// payload bytes) and one block's stream (at most the payload).
fn read_static<R: Read>(
    src: &mut CrcReader<R>,
    h: &header::FrameHeader,
    words: &mut [u64],
) -> Result<(), StreamError> {
    use coder::static_coded::{decode_block, parse_table};
    let payload = |source| DecodeError::Payload {
        offset: h.header_len,
        source,
    };
    let len = usize::try_from(h.payload_len).unwrap_or(usize::MAX);
    let entries = src
        .parse_bytes(|next| parse_table(h.params.m, len, next))?
        .map_err(payload)?;
    let mut stream = Vec::new();
    let mut w0 = 0usize;
    for (i, entry) in (0u64..).zip(&entries) {
        // Within the payload, and grown only as its bytes arrive.
        src.take_vec(&mut stream, entry.stream_len() as u64)?;
        let end = w0.saturating_add(entry.words());
        let block = words.get_mut(w0..end).unwrap_or_default();
        decode_block(i, entry, block, &stream).map_err(payload)?;
        w0 = end;
    }
    Ok(())
}

/// Reads one frame of a standard filter (types 0, 1 and 4) from `r`, which
/// is left just after it.
///
/// # Errors
/// [`StreamError::Decode`] for an invalid frame (including a kind or type
/// this reader does not stream), [`StreamError::Io`] for the reader's
/// errors and for input that ends inside the frame.
pub fn read_frame<R: Read>(r: R, limits: &DecodeLimits) -> Result<BloomFilter, StreamError> {
    let mut src = CrcReader {
        inner: r,
        crc: 0,
        read: 0,
    };
    // The header, a byte at a time (it is short), until it parses.
    let mut head = Vec::with_capacity(64);
    let h = loop {
        let mut b = [0u8; 1];
        src.take(&mut b)?;
        head.push(b[0]);
        match header::parse(&head, limits) {
            Ok(h) => break h,
            Err(DecodeError::Truncated { .. }) if head.len() < header::MAX_HEADER_LEN => {}
            Err(e) => return Err(e.into()),
        }
    };
    if h.kind != FilterKind::Standard {
        return Err(DecodeError::WrongKind {
            found: h.kind,
            expected: FilterKind::Standard,
        }
        .into());
    }
    if h.squid_cblock.is_some() || h.bip37_flags.is_some() {
        // As CheckedFrame::new says it: a Squid digest (or a BIP37 filter)
        // is a standard filter, but not one this reader streams.
        return Err(DecodeError::WrongFrameType {
            found: h.filter_type,
            expected: "a plain bit array (a Squid digest or BIP37 filter decodes with decode_any)",
        }
        .into());
    }
    let m = h.params.m;
    // The limits were checked by parse(), but a header is ~20 bytes: the
    // filter is allocated only once the payload has brought 1 byte per
    // PREFIX_EXPANSION bytes of it (or all of itself, if shorter), held
    // meanwhile as they arrive. A peer that sends a header and stalls
    // costs what it sent, not the filter it declared.
    let prefix_len = h
        .params
        .byte_len()
        .div_ceil(PREFIX_EXPANSION)
        .min(h.payload_len);
    let mut prefix = Vec::new();
    let got = (&mut src.inner).take(prefix_len).read_to_end(&mut prefix)?;
    if got as u64 != prefix_len {
        return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
    }
    let mut src = CrcReader {
        inner: prefix.as_slice().chain(&mut src.inner),
        crc: src.crc,
        read: src.read,
    };
    let mut words = zeroed_words(h.params.word_len()).map_err(DecodeError::from)?;
    match h.filter_type {
        FilterType::Raw => {
            let mut left = h.payload_len;
            let mut buf = vec![0u8; CHUNK];
            let mut at = 0usize;
            while left > 0 {
                let take = left.min(CHUNK as u64) as usize;
                let chunk = buf.get_mut(..take).unwrap_or_default();
                src.take(chunk)?;
                // at is a multiple of CHUNK, so of 8: the chunk starts a word.
                words_from_le_bytes(words.get_mut(at / 8..).unwrap_or_default(), chunk);
                at = at.saturating_add(take);
                left = left.saturating_sub(take as u64);
            }
        }
        FilterType::Coded => {
            // One parser with the in-memory decoder: the same errors at
            // the same offsets, and never a byte past the payload.
            let payload_len = h.payload_len;
            let parsed = src.parse_bytes(|next| coder::parse_block_lengths(m, payload_len, next))?;
            let (lens, table) = parsed.map_err(|source| DecodeError::Payload {
                offset: h.header_len,
                source,
            })?;
            let mut stream = Vec::new();
            let mut offset = table as usize;
            for ((w0, bits), len) in coder::block_spans(m).zip(lens) {
                // Each length is within the payload (their sum is), and
                // the buffer grows only as the stream's bytes arrive.
                src.take_vec(&mut stream, len)?;
                let end = w0.saturating_add(bits.div_ceil(64) as usize);
                let block = words.get_mut(w0..end).unwrap_or_default();
                coder::decode_one_block(&stream, bits, block, offset).map_err(|source| {
                    DecodeError::Payload {
                        offset: h.header_len,
                        source,
                    }
                })?;
                offset = offset.saturating_add(len as usize);
            }
        }
        FilterType::StaticCoded => read_static(&mut src, &h, &mut words)?,
        found => {
            return Err(DecodeError::WrongFrameType {
                found,
                expected: "a full (raw or coded)",
            }
            .into())
        }
    }
    let computed = src.crc;
    let mut crc = [0u8; 4];
    src.inner.read_exact(&mut crc)?;
    let stored = u32::from_le_bytes(crc);
    if stored != computed {
        return Err(DecodeError::ChecksumMismatch {
            expected: stored,
            actual: computed,
        }
        .into());
    }
    // A signed frame's signature follows the CRC: read past it, so that the
    // reader is left at the next frame. Streaming decoders do not verify
    // it (the frame is never whole in memory); `verify_frame` does.
    if h.signature_len() > 0 {
        let mut sig = [0u8; super::header::SIGNATURE_LEN];
        src.inner.read_exact(&mut sig)?;
    }
    if !padding_is_clear(m, &words) {
        return Err(DecodeError::from(crate::FilterError::PaddingBitsSet { m }).into());
    }
    Ok(BloomFilter::from_words_unchecked(h.params, h.n, words))
}

/// A frame in memory whose header, limits, length and CRC have been
/// checked, ready to be decoded block by block into a writer
/// ([`Self::write_bits`], [`Self::write_raw`]) without the array ever being
/// whole in memory: the way `cbloom decode` writes standard and
/// partitioned filters. It takes the frames [`streams_bits`] accepts.
///
/// Checking first lets a caller refuse a damaged frame before it opens its
/// output. A payload error can only be found in the block that holds it,
/// so a frame with a valid CRC that no encoder made (a faulty or hostile
/// one) stops the output there: **on error, what was written is a prefix
/// to discard.** Write to a temporary file and rename it on success where
/// that matters, as the CLI does for files.
///
/// Working memory beyond the frame: one coder block per thread and one
/// more (2^23 bits for type 1, the frame's block size for type 4, at most
/// the array), reused from block to block, a decode table per thread and
/// the frame's block table (`tests/alloc_stream_bits.rs`).
///
/// ```
/// use compressed_bloom::format::{self, stream::CheckedFrame};
/// use compressed_bloom::{BloomFilter, DecodeLimits, FilterParams};
/// let mut f = BloomFilter::new(FilterParams::new(100_000, 3, 7))?;
/// f.insert(b"key");
/// let frame = format::encode_static(&f);
/// let checked = CheckedFrame::new(&frame, &DecodeLimits::default())?;
/// let mut bits = Vec::new();
/// checked.write_bits(&mut bits)?;
/// assert_eq!(bits, f.to_bytes());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct CheckedFrame<'a> {
    header: header::FrameHeader,
    payload: &'a [u8],
}

impl<'a> CheckedFrame<'a> {
    /// Checks the one frame that fills `frame` as [`crate::decode_any`]
    /// does before it decodes the payload: the header and the limits, the
    /// length, the CRC and no trailing bytes, with the same errors in the
    /// same order. A kind or type that [`streams_bits`] refuses is
    /// [`DecodeError::WrongKind`] or [`DecodeError::WrongFrameType`],
    /// before the CRC is computed.
    ///
    /// # Errors
    /// As described.
    pub fn new(frame: &'a [u8], limits: &DecodeLimits) -> Result<Self, DecodeError> {
        let h = header::parse(frame, limits)?;
        if !streams_bits(&h) {
            if h.squid_cblock.is_some() || h.bip37_flags.is_some() {
                return Err(DecodeError::WrongFrameType {
                    found: h.filter_type,
                    expected: "a plain bit array (a Squid digest or BIP37 filter decodes with decode_any)",
                });
            }
            if !matches!(h.kind, FilterKind::Standard | FilterKind::Partitioned) {
                return Err(DecodeError::WrongKind {
                    found: h.kind,
                    expected: FilterKind::Standard,
                });
            }
            return Err(DecodeError::WrongFrameType {
                found: h.filter_type,
                expected: "a full (raw or coded)",
            });
        }
        let (header, payload) = super::checked_whole_frame(frame, limits)?;
        Ok(CheckedFrame { header, payload })
    }

    /// The frame's header.
    pub fn header(&self) -> &header::FrameHeader {
        &self.header
    }

    /// Decodes the array block by block on the coder's threads and writes
    /// its ⌈m/8⌉ packed bytes (the bytes of [`BloomFilter::to_bytes`]) to
    /// `w`. Returns the bytes written.
    ///
    /// # Errors
    /// [`StreamError::Decode`] for a payload that `decode_any` refuses, with
    /// its error (the first failing block's); [`StreamError::Io`] for the
    /// writer's. On error, what was written is a prefix to discard.
    pub fn write_bits<W: Write>(&self, mut w: W) -> Result<u64, StreamError> {
        put_payload_bits(&self.header, self.payload, |bytes| w.write_all(bytes))?;
        Ok(self.header.params.byte_len())
    }

    /// As [`Self::write_bits`], but writes a raw frame: the bytes of
    /// [`write_raw_frame`] for a standard filter, and of
    /// [`encode_partitioned_raw`](crate::kinds::partitioned::encode_partitioned_raw) for a
    /// partitioned one (in both the update identity, if any, is not
    /// carried over). Returns the bytes written.
    ///
    /// # Errors
    /// As [`Self::write_bits`].
    pub fn write_raw<W: Write>(&self, w: W) -> Result<u64, StreamError> {
        let h = &self.header;
        let fields = HeaderFields::of_kind(h.kind, FilterType::Raw);
        write_framed(w, &fields, &h.params, h.n, h.params.byte_len(), |out| {
            put_payload_bits(h, self.payload, |bytes| out.put(bytes))
        })
    }
}

internal! {
/// [`CheckedFrame::new`] then [`CheckedFrame::write_bits`]: the array of
/// the one frame in `frame` to `w` as packed bytes, decoded block by block.
/// A damaged frame writes nothing. Returns the header and the bytes
/// written.
///
/// # Errors
/// As those two; on error, what was written is a prefix to discard.
pub fn write_frame_bits<W: Write>(
    frame: &[u8],
    limits: &DecodeLimits,
    w: W,
) -> Result<(header::FrameHeader, u64), StreamError> {
    let checked = CheckedFrame::new(frame, limits)?;
    let written = checked.write_bits(w)?;
    Ok((checked.header, written))
}
}

internal! {
/// [`CheckedFrame::new`] then [`CheckedFrame::write_raw`].
///
/// # Errors
/// As those two; on error, what was written is a prefix to discard.
pub fn write_frame_raw<W: Write>(
    frame: &[u8],
    limits: &DecodeLimits,
    w: W,
) -> Result<(header::FrameHeader, u64), StreamError> {
    let checked = CheckedFrame::new(frame, limits)?;
    let written = checked.write_raw(w)?;
    Ok((checked.header, written))
}
}

internal! {
/// Whether [`CheckedFrame`] (and [`write_frame_bits`], [`write_frame_raw`])
/// takes a frame with this header: a standard filter (not a Squid digest)
/// or a partitioned one, raw, coded or static-coded.
pub fn streams_bits(h: &header::FrameHeader) -> bool {
    matches!(h.kind, FilterKind::Standard | FilterKind::Partitioned)
        && h.squid_cblock.is_none()
        && h.bip37_flags.is_none()
        && matches!(
            h.filter_type,
            FilterType::Raw | FilterType::Coded | FilterType::StaticCoded
        )
}
}

/// Decodes the payload of a frame [`CheckedFrame::new`] checked, block by
/// block on the coder's threads, and hands the packed array's ⌈m/8⌉ bytes
/// to `put` in order. Checks what [`super::decode_bits`] checks, each block
/// before it is handed on (the padding with the last).
fn put_payload_bits(
    h: &header::FrameHeader,
    payload: &[u8],
    mut put: impl FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), StreamError> {
    let m = h.params.m;
    let bytes = h.params.byte_len();
    let at = h.header_len;
    let in_payload = |source| StreamError::from(DecodeError::Payload { offset: at, source });
    if h.filter_type == FilterType::Raw {
        // Already the bytes: checked as BloomFilter::from_bytes checks them.
        check_packed(&h.params, payload).map_err(DecodeError::from)?;
        return Ok(put(payload)?);
    }
    // Every block but the last is whole words; the last is cut to the
    // array's bytes after its padding is checked.
    let mut left = bytes;
    let mut sink = |words: &[u64], last: bool| -> Result<(), StreamError> {
        if last && !padding_is_clear(m, words) {
            return Err(DecodeError::from(crate::FilterError::PaddingBitsSet { m }).into());
        }
        let take = (words.len() as u64).saturating_mul(8).min(left);
        with_le_bytes(words, take as usize, &mut put)?;
        left = left.saturating_sub(take);
        Ok(())
    };
    if h.filter_type == FilterType::Coded {
        let blocks = coder::Blocks::new(payload, m).map_err(in_payload)?;
        let count = blocks.len();
        let threads = coder::threads_for(count as u64);
        let decode = |b: usize, buf: &mut Vec<u64>| {
            blocks.decode_into(b, buf).map(|_| ()).map_err(in_payload)
        };
        coder::stream_blocks(count, threads, decode, |i, words| {
            sink(words, i.saturating_add(1) == count)
        })
    } else {
        use coder::static_coded::{decode_block, read_table};
        let entries = read_table(payload, m).map_err(in_payload)?;
        let count = entries.len();
        let threads = coder::threads_for(count as u64);
        let decode = |i: usize, buf: &mut Vec<u64>| {
            // i < count: every index has an entry.
            let Some(e) = entries.get(i) else {
                buf.clear();
                return Ok(());
            };
            // The block's decoder overwrites every word: only a buffer that
            // grows has new words to fill.
            buf.resize(e.words(), 0);
            decode_block(i as u64, e, buf, e.stream(payload))
                .map(|_| ())
                .map_err(in_payload)
        };
        coder::stream_blocks(count, threads, decode, |i, words| {
            sink(words, i.saturating_add(1) == count)
        })
    }
}
