//! Frames larger than one NATS message: how the publisher cuts them and how
//! a receiver puts them back together under its limits.
//!
//! A frame that fits in one piece travels as one message, as it always
//! did. A larger one travels as `n` consecutive messages on the same
//! subject, each carrying, besides the update identity, the piece headers:
//! [`PIECE`] (its index, from 0), [`PIECES`] (`n`), [`FRAME_BYTES`] (the
//! whole frame's length) and [`FRAME_CRC`] (the frame's own CRC-32C, its
//! last four bytes, little-endian, in decimal); pieces after the first also
//! carry [`FIRST_SEQ`], the stream sequence of the first piece, so that a
//! reader holding the last piece finds the others.
//!
//! The `Assembler` takes one message after the other and gives back a
//! whole frame only when every piece came, once each, in order, of one
//! frame, with exactly the declared length and the declared CRC. The
//! declared length is checked against the receiver's limit before a byte
//! is buffered, and the buffer never holds more than it. Anything else is
//! refused and the buffer dropped; the subscriber's state is never touched
//! by a piece, only by a whole frame.

use async_nats::HeaderMap;
use bytes::Bytes;

/// The piece's index, from 0 (decimal).
pub const PIECE: &str = "Cbloom-Piece";
/// How many pieces the frame has (decimal, at least 2 from this crate's
/// publisher).
pub const PIECES: &str = "Cbloom-Pieces";
/// The whole frame's length in bytes (decimal).
pub const FRAME_BYTES: &str = "Cbloom-Frame-Bytes";
/// The frame's CRC-32C, as stored in its last four bytes (decimal).
pub const FRAME_CRC: &str = "Cbloom-Frame-Crc";
/// On pieces after the first: the stream sequence of the first piece.
pub const FIRST_SEQ: &str = "Cbloom-First-Seq";

/// What a piece says of itself and of its frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PieceInfo {
    pub index: u32,
    pub count: u32,
    pub frame_bytes: u64,
    pub crc: u32,
    pub first_seq: Option<u64>,
    /// The identity headers, as sent: every piece of a frame has the same.
    identity: [Option<String>; 3],
}

impl PieceInfo {
    /// Whether `other` is a piece of the same frame.
    fn same_frame(&self, other: &PieceInfo) -> bool {
        self.count == other.count
            && self.frame_bytes == other.frame_bytes
            && self.crc == other.crc
            && self.identity == other.identity
    }
}

/// The piece headers of a message: `Ok(None)` for a whole frame (no piece
/// header at all), an error for headers present but malformed or
/// inconsistent.
pub(crate) fn piece_info(headers: Option<&HeaderMap>) -> Result<Option<PieceInfo>, String> {
    let Some(h) = headers else {
        return Ok(None);
    };
    let names = [PIECE, PIECES, FRAME_BYTES, FRAME_CRC];
    if names.iter().all(|n| h.get(*n).is_none()) {
        return Ok(None);
    }
    fn num<T: std::str::FromStr>(h: &HeaderMap, name: &str) -> Result<T, String> {
        let v = h
            .get(name)
            .ok_or_else(|| format!("a piece without the {name} header"))?;
        v.as_str()
            .parse()
            .map_err(|_| format!("malformed {name} header"))
    }
    let info = PieceInfo {
        index: num(h, PIECE)?,
        count: num(h, PIECES)?,
        frame_bytes: num(h, FRAME_BYTES)?,
        crc: num(h, FRAME_CRC)?,
        first_seq: match h.get(FIRST_SEQ) {
            None => None,
            Some(_) => Some(num(h, FIRST_SEQ)?),
        },
        identity: [super::headers::STREAM, super::headers::EPOCH, super::headers::SEQ]
            .map(|n| h.get(n).map(|v| v.as_str().to_owned())),
    };
    if info.count == 0 || info.index >= info.count {
        return Err(format!("piece {} of {}", info.index, info.count));
    }
    if info.frame_bytes < u64::from(info.count).max(4) {
        return Err(format!(
            "{} pieces for a frame of {} bytes",
            info.count, info.frame_bytes
        ));
    }
    Ok(Some(info))
}

internal! {
/// The headers that make `frame`'s piece `index` of `count` (the identity
/// headers are added by the caller).
pub fn piece_headers(
    h: &mut HeaderMap,
    frame: &[u8],
    index: usize,
    count: usize,
    first_seq: Option<u64>,
) {
    h.insert(PIECE, index.to_string().as_str());
    h.insert(PIECES, count.to_string().as_str());
    h.insert(FRAME_BYTES, frame.len().to_string().as_str());
    let crc = frame_crc(frame).map_or(0, |(_, crc)| crc);
    h.insert(FRAME_CRC, crc.to_string().as_str());
    if let Some(s) = first_seq {
        h.insert(FIRST_SEQ, s.to_string().as_str());
    }
}
}

/// Where a frame's CRC-32C stands and its value: the last four bytes,
/// or for a signed frame the four before its signature (docs/FORMAT.md
/// section 6, tag 2), as its header says. `None` for bytes whose header
/// does not parse.
fn frame_crc(frame: &[u8]) -> Option<(usize, u32)> {
    let h = crate::format::header::parse(frame, &crate::DecodeLimits::unlimited()).ok()?;
    let end = usize::try_from(h.signed_len()).ok()?;
    let at = end.checked_sub(4)?;
    let crc = frame.get(at..end)?;
    Some((at, u32::from_le_bytes(crc.try_into().ok()?)))
}

internal! {
/// A frame cut into pieces of at most `piece_bytes` (at least 1 byte
/// each): one piece when it fits.
pub fn cut(frame: &[u8], piece_bytes: usize) -> Vec<&[u8]> {
    if frame.is_empty() {
        return vec![frame];
    }
    frame.chunks(piece_bytes.max(1)).collect()
}
}

/// A piece sequence refused; the buffer that held it is dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    /// Why.
    pub reason: String,
    /// The buffer's capacity when it was refused: the memory the receiver
    /// held for the frame.
    pub held_bytes: usize,
}

/// What [`Assembler::push`] made of a message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Took {
    /// A whole frame: the message itself, or its last piece's frame.
    Frame(Bytes),
    /// A piece was kept; more must come.
    Pending,
    /// The message was refused (and any frame it belonged to).
    Refused(Refused),
}

/// A frame being put together.
#[derive(Debug)]
struct Partial {
    info: PieceInfo,
    next: u32,
    buf: Vec<u8>,
}

/// Reassembles pieces into frames, within `max_frame_bytes`.
#[derive(Debug)]
pub(crate) struct Assembler {
    max_frame_bytes: u64,
    partial: Option<Partial>,
    /// The most buffer capacity held at any time.
    peak_bytes: usize,
}

impl Assembler {
    pub(crate) fn new(max_frame_bytes: u64) -> Self {
        Assembler {
            max_frame_bytes,
            partial: None,
            peak_bytes: 0,
        }
    }

    /// Whether a frame is half-way.
    pub(crate) fn pending(&self) -> bool {
        self.partial.is_some()
    }

    /// The most memory the buffer ever held.
    pub(crate) fn peak_bytes(&self) -> usize {
        self.peak_bytes
    }

    /// Drops the frame being put together (the consumer starts again).
    pub(crate) fn reset(&mut self) {
        self.partial = None;
    }

    /// Refuses the frame being put together, if any.
    fn abandon(&mut self, why: &str) -> Option<Refused> {
        let p = self.partial.take()?;
        Some(Refused {
            reason: format!(
                "pieces of a {}-byte frame: {why} after {} of {} pieces",
                p.info.frame_bytes, p.next, p.info.count
            ),
            held_bytes: p.buf.capacity(),
        })
    }

    fn refuse(&mut self, reason: String) -> Took {
        let held_bytes = self.partial.take().map_or(0, |p| p.buf.capacity());
        Took::Refused(Refused { reason, held_bytes })
    }

    /// Takes one message. The first result is a frame that this message
    /// interrupted (refused: a whole frame or another frame's piece came
    /// before its last piece); the second is what became of the message.
    pub(crate) fn push(
        &mut self,
        headers: Option<&HeaderMap>,
        payload: &Bytes,
    ) -> (Option<Refused>, Took) {
        let info = match piece_info(headers) {
            Ok(Some(info)) => info,
            Ok(None) => {
                let cut = self.abandon("a whole frame came");
                return (cut, Took::Frame(payload.clone()));
            }
            Err(why) => {
                let cut = self.abandon("a malformed piece came");
                return (cut, Took::Refused(Refused { reason: why, held_bytes: 0 }));
            }
        };
        let mut cut = None;
        if let Some(p) = &self.partial {
            if !p.info.same_frame(&info) {
                cut = self.abandon("a piece of another frame came");
            } else if info.index != p.next {
                let why = if info.index < p.next {
                    format!("piece {} again or out of order", info.index)
                } else {
                    format!("piece {} missing", p.next)
                };
                let t = self.refuse(format!(
                    "pieces of a {}-byte frame: {why} (got piece {} of {})",
                    info.frame_bytes, info.index, info.count
                ));
                return (None, t);
            }
        }
        if self.partial.is_none() {
            if info.index != 0 {
                let t = self.refuse(format!(
                    "piece {} of {} without the pieces before it",
                    info.index, info.count
                ));
                return (cut, t);
            }
            if info.frame_bytes > self.max_frame_bytes {
                let t = self.refuse(format!(
                    "a frame of {} bytes declared, above the limit of {}",
                    info.frame_bytes, self.max_frame_bytes
                ));
                return (cut, t);
            }
            self.partial = Some(Partial {
                info: info.clone(),
                next: 0,
                buf: Vec::new(),
            });
        }
        let t = self.append(&info, payload);
        (cut, t)
    }

    /// Appends the expected next piece.
    fn append(&mut self, info: &PieceInfo, payload: &[u8]) -> Took {
        let Some(p) = self.partial.as_mut() else {
            return Took::Pending;
        };
        let total = usize::try_from(p.info.frame_bytes).unwrap_or(usize::MAX);
        let len = p.buf.len();
        let remaining_pieces = (p.info.count - info.index - 1) as usize;
        if payload.is_empty()
            || payload.len() > total - len
            || total - len - payload.len() < remaining_pieces
        {
            let why = format!(
                "piece {} of {} holds {} bytes where {} of the declared {} remain",
                info.index,
                info.count,
                payload.len(),
                total - len,
                total
            );
            return self.refuse(why);
        }
        let need = len + payload.len();
        if need > p.buf.capacity() {
            // Grow by doubling, never past the declared length.
            let cap = need.max(p.buf.capacity().saturating_mul(2)).min(total);
            p.buf.reserve_exact(cap - len);
        }
        p.buf.extend_from_slice(payload);
        self.peak_bytes = self.peak_bytes.max(p.buf.capacity());
        p.next += 1;
        if p.next < p.info.count {
            return Took::Pending;
        }
        if p.buf.len() != total {
            let why = format!(
                "the last piece ends the frame at {} of the declared {total} bytes",
                p.buf.len()
            );
            return self.refuse(why);
        }
        let (at, stored) = frame_crc(&p.buf).unwrap_or((0, !p.info.crc));
        let actual = crate::wire::crc::crc32c(&p.buf[..at]);
        if stored != p.info.crc || actual != p.info.crc {
            let why = format!(
                "the frame's CRC-32C is {actual:#010x}, its pieces declare {:#010x}",
                p.info.crc
            );
            return self.refuse(why);
        }
        let Some(p) = self.partial.take() else {
            return Took::Pending;
        };
        Took::Frame(Bytes::from(p.buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw standard frame of exactly `len` bytes (a header of 15, the
    /// array, the CRC), with keys that `seed` picks.
    fn frame(len: usize, seed: u8) -> Vec<u8> {
        let m = 8 * (len as u64 - 19);
        let mut f = crate::BloomFilter::new(crate::FilterParams::new(m, 3, 0)).unwrap();
        for i in 0..200u32 {
            f.insert(&[&i.to_le_bytes()[..], &[seed]].concat());
        }
        let out = crate::format::encode_with(&f, crate::Coding::Raw);
        assert_eq!(out.len(), len);
        out
    }

    fn pieces(f: &[u8], size: usize, seq: &str) -> Vec<(HeaderMap, Bytes)> {
        let parts = cut(f, size);
        let n = parts.len();
        parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut h = HeaderMap::new();
                h.insert(crate::nats::headers::SEQ, seq);
                piece_headers(&mut h, f, i, n, (i > 0).then_some(1));
                (h, Bytes::copy_from_slice(p))
            })
            .collect()
    }

    fn feed(a: &mut Assembler, ps: &[(HeaderMap, Bytes)]) -> Vec<(Option<Refused>, Took)> {
        ps.iter().map(|(h, b)| a.push(Some(h), b)).collect()
    }

    fn refused(t: &Took) -> bool {
        matches!(t, Took::Refused(_))
    }

    #[test]
    fn pieces_in_order_make_the_frame() {
        let f = frame(10_000, 1);
        let mut a = Assembler::new(20_000);
        let out = feed(&mut a, &pieces(&f, 3_000, "1"));
        assert_eq!(out.len(), 4);
        assert!(out[..3].iter().all(|(c, t)| c.is_none() && *t == Took::Pending));
        assert_eq!(out[3].1, Took::Frame(Bytes::from(f)));
        assert!(a.peak_bytes() <= 10_000);
        // A whole message passes as it is.
        let b = Bytes::from_static(b"whole");
        assert_eq!(a.push(None, &b), (None, Took::Frame(b)));
    }

    /// A signed frame's CRC stands before its 64-byte signature: its
    /// pieces declare that CRC and make the frame again.
    #[test]
    fn a_signed_frame_travels_in_pieces() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let f = crate::format::sign_frame(&frame(10_000, 1), &key).unwrap();
        let ps = pieces(&f, 3_000, "1");
        let mut a = Assembler::new(20_000);
        let out = feed(&mut a, &ps);
        assert_eq!(out.last().unwrap().1, Took::Frame(Bytes::from(f)));
    }

    #[test]
    fn hostile_pieces_are_refused_within_the_declared_size() {
        let f = frame(10_000, 1);
        let ps = pieces(&f, 3_000, "1");
        let other = pieces(&frame(10_000, 2), 3_000, "2");
        let cases: Vec<(&str, Vec<(HeaderMap, Bytes)>)> = vec![
            ("missing", vec![ps[0].clone(), ps[2].clone(), ps[3].clone()]),
            ("duplicated", vec![ps[0].clone(), ps[0].clone()]),
            ("reordered", vec![ps[1].clone(), ps[0].clone()]),
            ("interleaved", vec![ps[0].clone(), other[0].clone()]),
            ("no last piece", vec![ps[0].clone(), ps[1].clone(), ps[2].clone()]),
        ];
        for (what, seq) in cases {
            let mut a = Assembler::new(20_000);
            let out = feed(&mut a, &seq);
            let any = out.iter().any(|(c, t)| c.is_some() || refused(t));
            assert!(any || a.pending(), "{what}: {out:?}");
            assert!(!out.iter().any(|(_, t)| matches!(t, Took::Frame(_))), "{what}");
            assert!(a.peak_bytes() <= 10_000, "{what}");
        }
        // A flipped byte: the CRC refuses the frame.
        let mut bad = ps.clone();
        let mut b = bad[1].1.to_vec();
        b[7] ^= 1;
        bad[1].1 = b.into();
        let mut a = Assembler::new(20_000);
        let out = feed(&mut a, &bad);
        assert!(refused(&out[3].1), "{out:?}");
        assert!(!a.pending());
        // Over the limit: refused at the first piece, nothing buffered.
        let mut a = Assembler::new(9_999);
        let out = feed(&mut a, &ps[..1]);
        assert!(refused(&out[0].1));
        assert_eq!(a.peak_bytes(), 0);
        // Pieces longer than declared.
        let mut long = ps.clone();
        long[3].1 = Bytes::from(vec![0; 3_000]);
        let mut a = Assembler::new(20_000);
        let out = feed(&mut a, &long);
        assert!(refused(&out[3].1), "{out:?}");
        assert!(a.peak_bytes() <= 10_000);
        // Malformed headers.
        let mut h = ps[0].0.clone();
        h.insert(PIECE, "7");
        let mut a = Assembler::new(20_000);
        assert!(refused(&a.push(Some(&h), &ps[0].1).1));
        h.insert(PIECE, "x");
        assert!(refused(&a.push(Some(&h), &ps[0].1).1));
    }
}
