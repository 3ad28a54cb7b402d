//! The kind-5 payload (docs/FORMAT.md section 8.5, "Payload"): a short
//! prefix (band width, upper blocks, the shard table) and the solution
//! words, 16 bytes each, little-endian. The words are the queryable
//! structure, so decoding checks the length the parameters imply and
//! copies them.

use super::filter::Placed;
use super::{RibbonError, RibbonFilter, BAND};
use crate::prelude::*;
use crate::wire::varint;

/// Bytes of a solution word.
const WORD: u64 = 16;

/// The smallest prefix: band width, upper and shard count (a byte each),
/// one shard's rows (at least 128: two bytes) and seed.
pub const MIN_PREFIX: u64 = 6;

/// Bytes of each word of the last block: the bytes that hold its rows
/// below m (rows past m − 1 hold no key's solution and are not sent).
fn last_word_len(rows: u64) -> usize {
    let in_last = rows.saturating_sub((rows.saturating_sub(1) / BAND).saturating_mul(BAND));
    in_last.div_ceil(8) as usize
}

/// Words sent whole (every block's but the last) and in the last block.
fn split(rows: u64, cols: u32, upper: u64) -> Option<(u64, u64)> {
    let blocks = rows.div_ceil(BAND);
    if blocks == 0 {
        return Some((0, 0));
    }
    let whole = blocks
        .saturating_sub(1)
        .checked_mul(u64::from(cols))?
        .checked_add(upper.saturating_sub(1))?;
    let last = u64::from(cols).checked_add(u64::from(upper > 0))?;
    Some((whole, last))
}

/// Bytes of `f`'s payload.
pub fn payload_len(f: &RibbonFilter) -> usize {
    let table: usize = f
        .shards()
        .map(|s| varint::len(s.rows).saturating_add(1))
        .sum();
    1usize
        .saturating_add(varint::len(f.upper_blocks()))
        .saturating_add(varint::len(f.shards().count() as u64))
        .saturating_add(table)
        .saturating_add(solution_len(f.rows(), f.columns(), f.upper_blocks()).unwrap_or(0) as usize)
}

/// Appends `f`'s payload to `out`.
pub fn write(f: &RibbonFilter, out: &mut Vec<u8>) {
    out.reserve(payload_len(f));
    out.push(BAND as u8);
    varint::put(out, f.upper_blocks());
    varint::put(out, f.shards().count() as u64);
    for s in f.shards() {
        varint::put(out, s.rows);
        out.push(s.cseed);
    }
    let (whole, _) = split(f.rows(), f.columns(), f.upper_blocks()).unwrap_or((0, 0));
    let (head, last) = f.words().split_at((whole as usize).min(f.words().len()));
    for w in head {
        out.extend_from_slice(&w.to_le_bytes());
    }
    let cut = last_word_len(f.rows());
    for w in last {
        out.extend_from_slice(w.to_le_bytes().get(..cut).unwrap_or(&[]));
    }
}

/// Bytes of solution that `rows` rows with `cols` lower columns and
/// `upper` upper blocks hold, if it fits in u64: 16 per word, except that
/// the last block's words are cut to the bytes holding rows below m.
pub fn solution_len(rows: u64, cols: u32, upper: u64) -> Option<u64> {
    let (whole, last) = split(rows, cols, upper)?;
    whole
        .checked_mul(WORD)?
        .checked_add(last.checked_mul(last_word_len(rows) as u64)?)
}

/// Reads a payload for a header with `rows` (m), `cols` (k) and the
/// key-hash `seed`; n is the header's. Every count is
/// checked against the bytes present before anything is allocated.
///
/// # Errors
/// [`RibbonError`] with the payload offset where it applies.
pub fn parse(
    payload: &[u8],
    seed: u64,
    rows: u64,
    cols: u32,
    n: u64,
) -> Result<RibbonFilter, RibbonError> {
    let blocks = rows.div_ceil(BAND);
    let mut at = 0usize;
    let width = *payload
        .first()
        .ok_or(RibbonError::Truncated { offset: 0 })?;
    if u64::from(width) != BAND {
        return Err(RibbonError::BandWidth { width });
    }
    at = at.saturating_add(1);
    let next = |at: &mut usize, field: &'static str| -> Result<u64, RibbonError> {
        let rest = payload.get(*at..).unwrap_or(&[]);
        if rest.is_empty() {
            return Err(RibbonError::Truncated { offset: *at });
        }
        let (v, used) =
            varint::get(rest).map_err(|_| RibbonError::BadVarint { field, offset: *at })?;
        *at = at.saturating_add(used);
        Ok(v)
    };
    let upper = next(&mut at, "upper")?;
    // Upper blocks have r + 1 columns, at most 64.
    if upper > blocks || (upper > 0 && cols >= 64) {
        return Err(RibbonError::Upper { upper, blocks });
    }
    let shard_count = next(&mut at, "shards")?;
    // Each shard takes at least two bytes (a varint and its seed).
    let limit = (payload.len().saturating_sub(at) / 2) as u64;
    if shard_count == 0 || shard_count > limit {
        return Err(RibbonError::Shards {
            shards: shard_count,
            limit,
        });
    }
    // The one table the filter keeps, built in place (24 bytes per shard
    // of at least 2 payload bytes: within the 16 bytes per payload byte
    // the limits count, FORMAT.md section 2.3).
    let mut shards = Vec::with_capacity(shard_count as usize);
    let mut sum = 0u64;
    for shard in 0..shard_count {
        let r = next(&mut at, "rows")?;
        if r != 0 && r < BAND {
            return Err(RibbonError::ShardRows { shard, rows: r });
        }
        let cseed = *payload
            .get(at)
            .ok_or(RibbonError::Truncated { offset: at })?;
        at = at.saturating_add(1);
        let first = sum;
        sum = sum.saturating_add(r);
        if sum > rows {
            return Err(RibbonError::RowSum { found: sum, rows });
        }
        shards.push(Placed {
            first,
            rows: r,
            cseed,
        });
    }
    if sum != rows {
        return Err(RibbonError::RowSum { found: sum, rows });
    }
    let rest = payload.get(at..).unwrap_or(&[]);
    let expected = solution_len(rows, cols, upper).unwrap_or(u64::MAX);
    if rest.len() as u64 != expected {
        return Err(RibbonError::Length {
            found: rest.len() as u64,
            expected,
        });
    }
    // The length matched, so the split fits in memory already held.
    let (whole, _) = split(rows, cols, upper).unwrap_or((0, 0));
    let (head, tail) = rest.split_at((whole as usize).saturating_mul(16).min(rest.len()));
    let cut = last_word_len(rows);
    // Allocated once at its length, so that the filter holds what
    // `heap_bytes` reports.
    let count = head
        .len()
        .checked_div(WORD as usize)
        .unwrap_or(0)
        .saturating_add(tail.len().checked_div(cut.max(1)).unwrap_or(0));
    let mut words: Vec<u128> = Vec::with_capacity(count);
    words.extend(
        head.chunks_exact(WORD as usize)
            .map(|c| u128::from_le_bytes(c.try_into().unwrap_or([0; 16]))),
    );
    words.extend(tail.chunks_exact(cut.max(1)).map(|c| {
        let mut b = [0u8; 16];
        if let Some(dst) = b.get_mut(..c.len()) {
            dst.copy_from_slice(c);
        }
        u128::from_le_bytes(b)
    }));
    Ok(RibbonFilter::from_placed(
        seed, n, cols, upper, shards, rows, words,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter() -> RibbonFilter {
        let keys: Vec<String> = (0..2000).map(|i| format!("k{i}")).collect();
        RibbonFilter::from_keys(&keys, 0.01, 3).unwrap()
    }

    #[test]
    fn round_trip() {
        let f = filter();
        let mut out = Vec::new();
        write(&f, &mut out);
        assert_eq!(out.len(), payload_len(&f));
        let g = parse(&out, f.seed(), f.rows(), f.columns(), f.len()).unwrap();
        assert_eq!(f, g);
    }

    #[test]
    fn every_truncation_and_extension_is_refused() {
        let f = filter();
        let mut out = Vec::new();
        write(&f, &mut out);
        for len in 0..out.len() {
            assert!(parse(&out[..len], 3, f.rows(), f.columns(), 0).is_err());
        }
        out.push(0);
        assert!(parse(&out, 3, f.rows(), f.columns(), 0).is_err());
    }

    /// FORMAT.md section 8.5, "Checks": a prefix varint with no byte left
    /// where it starts is `Truncated` at the payload's length; one the
    /// payload ends inside is `BadVarint` at its first byte; a missing seed
    /// byte is `Truncated` at its offset.
    #[test]
    fn the_payload_end_inside_the_prefix() {
        assert_eq!(
            parse(&[128], 0, 128, 1, 0),
            Err(RibbonError::Truncated { offset: 1 })
        );
        assert_eq!(
            parse(&[128, 0x80], 0, 128, 1, 0),
            Err(RibbonError::BadVarint {
                field: "upper",
                offset: 1
            })
        );
        // Nine shards in 22 bytes: eight empty ones, then rows cut at the end.
        let mut p = vec![128, 0, 9];
        p.extend_from_slice(&[0; 16]);
        p.extend_from_slice(&[0x80, 0x80, 0x80]);
        assert_eq!(
            parse(&p, 0, 128, 1, 0),
            Err(RibbonError::BadVarint {
                field: "rows",
                offset: 19
            })
        );
        // The last shard's rows end at the payload's end: no seed byte.
        p.truncate(19);
        p.extend_from_slice(&[0x80, 0x80, 0x01]);
        assert_eq!(
            parse(&p, 0, 128, 1, 0),
            Err(RibbonError::Truncated { offset: 22 })
        );
        // m = 384: 25 shards fit in 54 bytes, but three of 128 rows take
        // three bytes each, so the last shard's rows have no byte at all.
        let mut q = vec![128, 0, 25];
        for _ in 0..3 {
            q.extend_from_slice(&[0x80, 0x01, 0]);
        }
        q.extend_from_slice(&[0; 42]);
        assert_eq!(q.len(), 54);
        assert_eq!(
            parse(&q, 0, 384, 1, 0),
            Err(RibbonError::Truncated { offset: 54 })
        );
    }

    #[test]
    fn counts_are_checked_before_allocating() {
        // 2^40 shards in a 12-byte payload.
        let mut p = vec![128u8, 0];
        varint::put(&mut p, 1 << 40);
        p.extend_from_slice(&[1, 0, 0, 0]);
        assert!(matches!(
            parse(&p, 0, 128, 1, 0),
            Err(RibbonError::Shards { .. })
        ));
        assert!(matches!(
            parse(&[64, 0, 1, 0x80, 1, 0], 0, 128, 1, 0),
            Err(RibbonError::BandWidth { width: 64 })
        ));
        assert!(matches!(
            parse(&[128, 2, 1, 0x80, 1, 0], 0, 128, 1, 0),
            Err(RibbonError::Upper { .. })
        ));
        assert!(matches!(
            parse(&[128, 0, 1, 0x81, 1, 0], 0, 128, 1, 0),
            Err(RibbonError::RowSum { .. })
        ));
        assert!(matches!(
            parse(&[128, 0, 2, 0x7F, 0, 0x01, 0], 0, 128, 1, 0),
            Err(RibbonError::ShardRows { shard: 0, rows: 127 })
        ));
    }
}
