//! The entropy coder for bit arrays: an adaptive run-length model
//! (`model`) driving an interleaved rANS coder (`block`).
//!
//! The array is cut into blocks of [`BLOCK_BITS`] bits that are coded
//! independently (each with its own adaptive model), so large filters encode
//! and decode on several cores. The payload is: the byte lengths of all blocks
//! but the last (LEB128 varints), then the block streams back to back.
//!
//! The coded size stays within [`payload_bits_bound`] of the entropy bound
//! log2 C(m, x); the tests check that bound on every configuration of the
//! benchmark set.

use crate::prelude::*;
// Decoding code: the panic lints are denied for this module tree in lib.rs.

pub(crate) mod block;
pub(crate) mod bytes;
#[cfg(all(feature = "simd", target_arch = "x86_64"))]
pub(crate) mod bytes_simd;
pub(crate) mod model;
pub(crate) mod popcount;
pub mod static_coded;
pub mod range;

use crate::wire::varint;
use thiserror::Error;

/// Bits per independently coded block (a multiple of 64, so blocks are
/// word-aligned in memory).
pub const BLOCK_BITS: u64 = 1 << 23;
const _: () = assert!(BLOCK_BITS.is_multiple_of(64));

/// Ways a coded payload can be malformed. Offsets are in bytes from the start
/// of the payload.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CoderError {
    /// The payload ended while the decoder still needed input.
    #[error("coded payload ends early at byte {offset}")]
    UnexpectedEnd {
        /// Where input ran out.
        offset: usize,
    },
    /// A decoded run goes past the end of its block.
    #[error(
        "decoded run reaches bit {position}, past the end of its block (payload byte {offset})"
    )]
    RunPastEnd {
        /// Payload byte being read.
        offset: usize,
        /// Bit position the run would reach (block-relative).
        position: u64,
    },
    /// A block stream has bytes left after its last symbol.
    #[error("coded block has unread bytes from payload byte {offset}")]
    TrailingData {
        /// First unread byte.
        offset: usize,
    },
    /// A coder state is outside its invariant range (corrupt stream).
    #[error("coder state invalid at payload byte {offset}")]
    BadState {
        /// Where it was detected.
        offset: usize,
    },
    /// The caller's output slice does not have ⌈m/64⌉ words (a misuse of
    /// [`decode`], not a property of the payload).
    #[error("output holds {actual} words, but an array of m bits needs {expected}")]
    OutputLength {
        /// ⌈m/64⌉.
        expected: u64,
        /// The slice's length.
        actual: usize,
    },
    /// A block of a static-coded payload (format type 4) decoded to a count
    /// of ones other than the one its table entry declares.
    #[error("block {block} declares {declared} ones but decodes to {decoded}")]
    CountMismatch {
        /// Index of the block.
        block: u64,
        /// The count in the block table.
        declared: u64,
        /// The count the stream decoded to.
        decoded: u64,
    },
    /// The block length table is malformed or inconsistent with the payload.
    #[error("block table invalid at payload byte {offset}: {reason}")]
    BlockTable {
        /// Where it was detected.
        offset: usize,
        /// What was wrong.
        reason: &'static str,
    },
}

impl CoderError {
    /// The error with a block-relative offset made payload-relative.
    fn shifted(self, base: usize) -> Self {
        // Offsets are within the payload, a slice: the sum cannot overflow.
        let at = |offset: usize| offset.saturating_add(base);
        match self {
            CoderError::UnexpectedEnd { offset } => {
                CoderError::UnexpectedEnd { offset: at(offset) }
            }
            CoderError::RunPastEnd { offset, position } => CoderError::RunPastEnd {
                offset: at(offset),
                position,
            },
            CoderError::TrailingData { offset } => CoderError::TrailingData { offset: at(offset) },
            CoderError::BadState { offset } => CoderError::BadState { offset: at(offset) },
            e @ (CoderError::BlockTable { .. }
            | CoderError::OutputLength { .. }
            | CoderError::CountMismatch { .. }) => e,
        }
    }
}

/// Number of blocks for an m-bit array.
pub fn block_count(m: u64) -> u64 {
    m.div_ceil(BLOCK_BITS).max(1)
}

/// Upper bound on the coded payload in bits for an m-bit array whose entropy
/// bound is `log2_binomial` = log2 C(m, x) bits.
///
/// Per block: the rANS flush (32 bits per lane), the learning cost of the
/// adaptive model (about 0.72 bits per doubling stage, 24 stages at most),
/// the virtual end-of-block symbol (at most ~20 bits), a few bits of
/// termination, and up to 32 bits of block-length varint; plus 0.04% of the
/// entropy bound for quantisation of the model (12-bit frequencies) and the
/// uniform coding of low run bits. `tests/coder_size.rs` checks real payloads
/// against this bound.
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for tests and benches
pub fn payload_bits_bound(m: u64, log2_binomial: f64) -> f64 {
    let blocks = block_count(m);
    let full = m / BLOCK_BITS;
    let lanes_bits = |bits: u64| 32.0 * block::lanes_for(bits) as f64;
    let mut per_block = full as f64 * (lanes_bits(BLOCK_BITS) + 100.0);
    if full < blocks {
        per_block += lanes_bits(m % BLOCK_BITS) + 100.0;
    }
    let table = 32.0 * blocks.saturating_sub(1) as f64;
    log2_binomial * 1.0004 + per_block + table
}

/// Each block's first word and bit count, in order.
pub(crate) fn block_spans(m: u64) -> impl Iterator<Item = (usize, u64)> {
    (0..block_count(m)).map(move |b| {
        // b < ⌈m / BLOCK_BITS⌉, so the start is below m (or 0 when m = 0).
        ((b.saturating_mul(BLOCK_BITS) / 64) as usize, block_bits(m, b))
    })
}

/// Bit count of block `b` of an m-bit array (0 past the last block).
fn block_bits(m: u64, b: u64) -> u64 {
    m.saturating_sub(b.saturating_mul(BLOCK_BITS)).min(BLOCK_BITS)
}

/// Threads to use for `blocks` blocks (1 unless the array is large).
pub(crate) fn threads_for(blocks: u64) -> usize {
    if blocks < 2 {
        return 1;
    }
    #[cfg(feature = "std")]
    return std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(blocks as usize);
    #[cfg(not(feature = "std"))]
    1
}

/// Encodes the first `m` bits of `words` and appends the payload to `out`.
/// Bits at positions >= m are ignored.
///
/// # Panics
/// If `words` holds fewer than ⌈m/64⌉ words (a caller bug: every
/// [`BloomFilter`](crate::BloomFilter) holds exactly that many).
pub fn encode(words: &[u64], m: u64, out: &mut Vec<u8>) {
    encode_with_threads(words, m, out, threads_for(block_count(m)));
}

/// [`encode`] with an explicit thread count (1 = on the calling thread).
///
/// # Panics
#[cfg(feature = "std")]
/// Encodes one block (its first word `w0`, `bits` bits) of `words` into
/// `out`, with the caller's scratch buffers: for encoders that stream.
pub(crate) fn encode_one_block(
    words: &[u64],
    w0: usize,
    bits: u64,
    out: &mut Vec<u8>,
    scratch: &mut block::Scratch,
) {
    block::encode_block_with(words.get(w0..).unwrap_or_default(), bits, out, scratch);
}

/// Decodes one block stream into `words` (overwritten; `bits` bits), `base`
/// being the stream's payload offset for error reports.
#[cfg(feature = "std")]
pub(crate) fn decode_one_block(
    stream: &[u8],
    bits: u64,
    words: &mut [u64],
    base: usize,
) -> Result<u64, CoderError> {
    block::decode_block(stream, bits, words, base)
}

/// As [`encode`].
pub fn encode_with_threads(words: &[u64], m: u64, out: &mut Vec<u8>, threads: usize) {
    assert!(
        words.len() as u64 >= m.div_ceil(64),
        "encode: {} words cannot hold {m} bits",
        words.len()
    );
    let spans: Vec<(usize, u64)> = block_spans(m).collect();
    // Each thread keeps one set of scratch buffers for its blocks.
    let streams = map_threaded(&spans, threads, |scratch, &(w0, bits)| {
        let mut v = Vec::new();
        // In range by the assertion above; the block reads ⌈bits/64⌉ words.
        let block = words.get(w0..).unwrap_or_default();
        block::encode_block_with(block, bits, &mut v, scratch);
        v
    });
    if let Some((_, init)) = streams.split_last() {
        for s in init {
            varint::put(out, s.len() as u64);
        }
    }
    for s in &streams {
        out.extend_from_slice(s);
    }
}

/// Maps `items` through `f` on up to `threads` threads and returns the
/// results in item order: the encoders' way of coding blocks in parallel.
/// Each thread keeps one scratch value `S` for all the items it takes, and
/// takes the next item not yet taken (a shared counter), so threads finish
/// together even when the items differ in size: with fixed runs, the 9
/// blocks of the 17.5 MB filter split 5 : 4, and the last block being a
/// third of the others, one thread coded 5 blocks' worth while the other
/// coded 3.3 (two-thread type-4 encode 818 MB/s, against 918–969 taking
/// blocks from the counter).
pub(crate) fn map_threaded<T: Sync, S: Default, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    #[cfg(feature = "std")]
    if threads > 1 && items.len() >= 2 {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let next = AtomicUsize::new(0);
        let (f, next) = (&f, &next);
        let worker = move || {
            let mut scratch = S::default();
            let mut got = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                // None once every item is taken.
                let Some(item) = items.get(i) else { break };
                got.push((i, f(&mut scratch, item)));
            }
            got
        };
        let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
            // The calling thread is one of the workers (see
            // `decode_jobs_threaded`).
            let handles: Vec<_> = (1..threads.min(items.len()))
                .map(|_| s.spawn(worker))
                .collect();
            let mut done = worker();
            for h in handles {
                // A panic in an encoder thread is a bug: re-raise it here.
                done.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            }
            done
        });
        done.sort_unstable_by_key(|&(i, _)| i);
        return done.into_iter().map(|(_, r)| r).collect();
    }
    let _ = threads;
    let mut scratch = S::default();
    items.iter().map(|item| f(&mut scratch, item)).collect()
}

/// Decodes a payload into `words`, which must hold exactly ⌈m/64⌉ words;
/// whatever they held is overwritten (each block's thread clears its own
/// words, so the caller need not). On up to one thread per block (at most
/// the machine's cores). On an error their content is unspecified.
///
/// Memory beyond `words`: one 32 KiB decode table per thread in flight, and
/// about 100 bytes per block for the block table and the per-block jobs
/// (`tests/alloc_threads.rs` checks 32 KiB · threads + 128 B · blocks +
/// 16 KiB at 1, 2 and 8 threads).
///
/// # Errors
/// Any [`CoderError`]: the payload is not exactly what [`encode`] produces
/// for some m-bit array.
pub fn decode(payload: &[u8], m: u64, words: &mut [u64]) -> Result<(), CoderError> {
    decode_with_threads(payload, m, words, threads_for(block_count(m)))
}

/// Reads the block table at the front of a payload for an m-bit array and
/// returns each block stream's byte range. Every length is checked against
/// the bytes that remain before any block is decoded.
fn block_ranges(payload: &[u8], m: u64) -> Result<Vec<(usize, usize)>, CoderError> {
    let mut bytes = payload.iter().copied();
    let (lens, table) = parse_block_lengths(m, payload.len() as u64, || bytes.next())?;
    // The lengths add up to the payload less the table (checked).
    let mut at = table as usize;
    Ok(lens
        .iter()
        .map(|&len| {
            let start = at;
            at = at.saturating_add(len as usize);
            (start, at)
        })
        .collect())
}

/// Reads a type-1 block table for an m-bit array from `next`, which yields
/// the payload's bytes in order (None: no more, or the caller's reader
/// failed), never past the payload's `len` bytes: the length of every
/// block (the last one's is what the others and the table leave) and the
/// table's own length. The in-memory decoder and the streamed reader
/// (`format::stream::read_frame`) share it, so they refuse a table with
/// the same error at the same offset.
pub(crate) fn parse_block_lengths(
    m: u64,
    len: u64,
    mut next: impl FnMut() -> Option<u8>,
) -> Result<(Vec<u64>, u64), CoderError> {
    let blocks = block_count(m);
    // Every length but the last takes a byte: the capacity is bounded by the
    // input, not by m.
    let mut lens = Vec::with_capacity(blocks.min(len.saturating_add(1)) as usize);
    let mut table = 0u64;
    for _ in 1..blocks {
        // A varint's bytes up to its last, its tenth, or the payload's end;
        // `varint::get` then says what is wrong with them, if anything.
        let mut bytes = [0u8; 10];
        let mut n = 0usize;
        for slot in &mut bytes {
            if table.saturating_add(n as u64) >= len {
                break;
            }
            let Some(b) = next() else {
                break;
            };
            *slot = b;
            n = n.saturating_add(1);
            if b & 0x80 == 0 {
                break;
            }
        }
        let (l, used) = varint::get(bytes.get(..n).unwrap_or_default()).map_err(|reason| {
            CoderError::BlockTable {
                offset: table as usize,
                reason,
            }
        })?;
        table = table.saturating_add(used as u64);
        lens.push(l);
    }
    let listed = lens.iter().fold(table, |a, &l| a.saturating_add(l));
    let last = len.checked_sub(listed).ok_or(CoderError::BlockTable {
        offset: table as usize,
        reason: "block lengths exceed the payload",
    })?;
    lens.push(last);
    Ok((lens, table))
}

/// A payload's block table, checked, from which any block can be decoded on
/// its own: for readers that walk an array front to back (or from any block
/// on) without holding all of it, as the conditional delta's scatter does.
pub(crate) struct Blocks<'a> {
    payload: &'a [u8],
    ranges: Vec<(usize, usize)>,
    m: u64,
}

impl<'a> Blocks<'a> {
    /// Reads and checks the block table of a payload for an m-bit array.
    ///
    /// # Errors
    /// [`CoderError::BlockTable`] if the table is malformed.
    pub(crate) fn new(payload: &'a [u8], m: u64) -> Result<Self, CoderError> {
        Ok(Blocks {
            payload,
            ranges: block_ranges(payload, m)?,
            m,
        })
    }

    /// Number of blocks (for the block-by-block writer of `format::stream`).
    #[cfg(feature = "std")]
    pub(crate) fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Length of the payload (the offset reported when a reader asks for a
    /// block past the last).
    pub(crate) fn payload_len(&self) -> usize {
        self.payload.len()
    }

    /// Decodes block `b` into `words` (resized to the block's ⌈bits/64⌉
    /// words) and returns its bit count; bits past the count in the last word
    /// are 0. An index past the last block is reported as a stream that ends
    /// early (callers ask only for blocks the array has).
    ///
    /// # Errors
    /// Any [`CoderError`] of the block, with payload offsets.
    pub(crate) fn decode_into(&self, b: usize, words: &mut Vec<u64>) -> Result<u64, CoderError> {
        let Some(&(s, e)) = self.ranges.get(b) else {
            return Err(CoderError::UnexpectedEnd {
                offset: self.payload.len(),
            });
        };
        let bits = block_bits(self.m, b as u64);
        // The block's decoder overwrites every word.
        words.resize(bits.div_ceil(64) as usize, 0);
        let stream = self.payload.get(s..e).unwrap_or_default();
        block::decode_block(stream, bits, words, s)?;
        Ok(bits)
    }
}

/// Decodes a payload for an m-bit array one block at a time on the calling
/// thread, handing each block to `sink` as (index of its first bit, its
/// words, its bit count); bits past the count in the last word are 0. Memory
/// is one block's words (at most [`BLOCK_BITS`]/8 bytes), whatever m is.
///
/// # Errors
/// As [`decode`]; blocks before the failing one have been handed to `sink`.
pub fn decode_each_block(
    payload: &[u8],
    m: u64,
    mut sink: impl FnMut(u64, &[u64], u64),
) -> Result<(), CoderError> {
    let blocks = Blocks::new(payload, m)?;
    let mut words = Vec::with_capacity(m.min(BLOCK_BITS).div_ceil(64) as usize);
    for (b, (w0, _)) in block_spans(m).enumerate() {
        let bits = blocks.decode_into(b, &mut words)?;
        sink((w0 as u64).saturating_mul(64), &words, bits);
    }
    Ok(())
}

/// [`decode`] with an explicit thread count.
///
/// # Errors
/// As [`decode`].
pub fn decode_with_threads(
    payload: &[u8],
    m: u64,
    words: &mut [u64],
    threads: usize,
) -> Result<(), CoderError> {
    decode_work(payload, m, words, threads).map(|_| ())
}

/// [`decode`] on the calling thread, returning the decoder's work: the
/// number of coding steps (symbols and uniform low-bit chunks) it took. The
/// format bounds it by 5 steps per output bit plus one per block
/// (docs/HARDENING.md, "Cost"); `tests/hostile/frames.rs` checks it on hostile
/// frames.
///
/// # Errors
/// As [`decode`].
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for tests and benches
pub fn decode_counting(payload: &[u8], m: u64, words: &mut [u64]) -> Result<u64, CoderError> {
    decode_work(payload, m, words, 1)
}

/// Checks that `words` is exactly the ⌈m/64⌉ words of an m-bit array.
fn check_output(m: u64, words: &[u64]) -> Result<(), CoderError> {
    if words.len() as u64 != m.div_ceil(64) {
        return Err(CoderError::OutputLength {
            expected: m.div_ceil(64),
            actual: words.len(),
        });
    }
    Ok(())
}

pub(crate) fn decode_work(
    payload: &[u8],
    m: u64,
    words: &mut [u64],
    threads: usize,
) -> Result<u64, CoderError> {
    check_output(m, words)?;
    let blocks = block_count(m) as usize;
    let ranges = block_ranges(payload, m)?;
    // Split the output into disjoint per-block word slices (the blocks'
    // words add up to ⌈m/64⌉, checked above; block_ranges checked the
    // streams lie in the payload).
    let mut jobs: Vec<(&[u8], u64, &mut [u64], usize)> = Vec::with_capacity(blocks);
    let mut rest = words;
    for ((_, bits), &(s, e)) in block_spans(m).zip(&ranges) {
        let wn = bits.div_ceil(64) as usize;
        let (head, tail) = rest.split_at_mut_checked(wn).unwrap_or_default();
        rest = tail;
        jobs.push((payload.get(s..e).unwrap_or_default(), bits, head, s));
    }
    let run =
        |job: &mut (&[u8], u64, &mut [u64], usize)| block::decode_block(job.0, job.1, job.2, job.3);
    #[cfg(feature = "std")]
    if threads > 1 && jobs.len() >= 2 {
        return decode_jobs_threaded(jobs, threads, run);
    }
    let _ = threads;
    jobs.iter_mut()
        .try_fold(0u64, |n, job| Ok(n.saturating_add(run(job)?)))
}

/// A block [`stream_blocks`] decoded: its outcome and its buffer.
#[cfg(feature = "std")]
type Decoded<E> = (Result<(), E>, Vec<u64>);

/// What a [`stream_blocks`] worker reports.
#[cfg(feature = "std")]
enum Report<E> {
    /// Block i, decoded (or refused).
    Done(usize, Decoded<E>),
    /// The decoder panicked (a bug): the payload, re-raised on the caller.
    Panicked(Box<dyn core::any::Any + Send>),
}

/// Decodes the `count` blocks of an array on `threads` worker threads and
/// hands each to `sink` in array order, with its index, on the calling
/// thread. Workers take the next block from a shared counter as they come
/// free (a slow block or a preempted thread holds up nothing else), each
/// into a buffer from a pool of `threads` + 1 that the sink returns them
/// to, so a buffer's pages are touched once however many blocks pass
/// through it. `decode(i, buf)` sizes `buf` and decodes block i
/// into it. Memory: `threads` + 1 block buffers and as many slots, whatever
/// the array's size. Stops at the first error in array order, a block's or
/// the sink's: blocks after it may have been decoded but are never handed
/// on, and the workers stop taking blocks. A panic in `decode` (a bug)
/// stops the workers too and is re-raised here with its own payload.
///
/// A worker takes its buffer *before* its block index, so the block the
/// sink waits for always has a buffer: the pool cannot deadlock. It also
/// means the blocks taken and not yet handed on, [want, next), hold a
/// buffer each, so there are at most `threads` + 1 of them and a ring of
/// that many slots keeps them. One spare buffer lets a worker go on while
/// the sink writes; more cost fresh pages (`cbloom decode --bits-only` of
/// the 17.5 MB type-4 frame, medians of 15 alternating: 24.1 ms with
/// `threads` + 1 buffers, 24.6 with 2·`threads`).
#[cfg(feature = "std")]
pub(crate) fn stream_blocks<E: Send>(
    count: usize,
    threads: usize,
    decode: impl Fn(usize, &mut Vec<u64>) -> Result<(), E> + Sync,
    mut sink: impl FnMut(usize, &[u64]) -> Result<(), E>,
) -> Result<(), E> {
    use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{mpsc, Mutex};
    let threads = threads.clamp(1, count.max(1));
    if threads == 1 {
        let mut buf = Vec::new();
        for i in 0..count {
            decode(i, &mut buf)?;
            sink(i, &buf)?;
        }
        return Ok(());
    }
    let slots = threads.saturating_add(1);
    let next = AtomicUsize::new(0);
    let (free_tx, free_rx) = mpsc::channel::<Vec<u64>>();
    for _ in 0..slots {
        // The receiver is alive: cannot fail.
        let _ = free_tx.send(Vec::new());
    }
    let free_rx = Mutex::new(free_rx);
    let (done_tx, done_rx) = mpsc::channel::<Report<E>>();
    let (next, free_rx, decode) = (&next, &free_rx, &decode);
    let (outcome, panicked) = std::thread::scope(|s| {
        let mut workers = Vec::with_capacity(threads);
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            // No buffer (the pool's sender is gone: the sink stopped): stop.
            // The guard is dropped as soon as a buffer is taken, so workers
            // decode in parallel; a worker never panics holding it.
            let take = move || free_rx.lock().ok().and_then(|rx| rx.recv().ok());
            workers.push(s.spawn(move || {
                while let Some(mut buf) = take() {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    let report = match catch_unwind(AssertUnwindSafe(|| decode(i, &mut buf))) {
                        Ok(result) => Report::Done(i, (result, buf)),
                        Err(payload) => Report::Panicked(payload),
                    };
                    let stop = matches!(report, Report::Panicked(_));
                    if done_tx.send(report).is_err() || stop {
                        break;
                    }
                }
            }));
        }
        drop(done_tx);
        // Blocks that arrived before their turn: block i in slot i mod slots.
        let mut waiting: Vec<Option<Decoded<E>>> = Vec::new();
        waiting.resize_with(slots, || None);
        let mut want = 0usize;
        let mut panicked = None;
        let outcome = loop {
            if want >= count {
                break Ok(());
            }
            if let Some((result, buf)) = waiting.get_mut(want.checked_rem(slots).unwrap_or(0)).and_then(Option::take) {
                if let Err(e) = result.and_then(|()| sink(want, &buf)) {
                    break Err(e);
                }
                // Workers may all have stopped: nothing to return it to.
                let _ = free_tx.send(buf);
                want = want.saturating_add(1);
                continue;
            }
            match done_rx.recv() {
                Ok(Report::Done(i, decoded)) => {
                    if let Some(slot) = waiting.get_mut(i.checked_rem(slots).unwrap_or(0)) {
                        *slot = Some(decoded);
                    }
                }
                Ok(Report::Panicked(payload)) => {
                    panicked = Some(payload);
                    break Ok(());
                }
                // Every worker is gone and block `want` never came: only a
                // bug can do that. Never report success without it.
                Err(_) => {
                    panicked = Some(Box::new("a block decoder stopped without a result"));
                    break Ok(());
                }
            }
        };
        // Stop the workers: no more buffers, and no more blocks to take.
        next.store(count, Ordering::Relaxed);
        drop(free_tx);
        // Join each worker's thread before returning. The scope's own wait
        // ends when the workers' closures do, and leaves their threads to
        // finish exiting (and free what they hold) after the caller has
        // moved on; the fuzzer's leak check caught 112 bytes in that window.
        for w in workers {
            if let Err(payload) = w.join() {
                panicked.get_or_insert(payload);
            }
        }
        (outcome, panicked)
    });
    if let Some(payload) = panicked {
        resume_unwind(payload);
    }
    outcome
}

/// The threaded half of [`decode_work`]: `threads` workers take the next
/// block from a shared queue until none is left, so blocks of uneven cost
/// (and a short last block) spread evenly. Reports the first failing block
/// in payload order: after a failure, blocks past it are skipped, blocks
/// before it are still decoded (one of them may fail first).
#[cfg(feature = "std")]
fn decode_jobs_threaded<J: Send>(
    jobs: Vec<J>,
    threads: usize,
    run: impl Fn(&mut J) -> Result<u64, CoderError> + Send + Sync + Copy,
) -> Result<u64, CoderError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let workers = threads.min(jobs.len());
    let queue = Mutex::new(jobs.into_iter().enumerate());
    // The index of the first failing block so far (usize::MAX: none).
    let failed_at = AtomicUsize::new(usize::MAX);
    let worker = || {
        let mut steps = 0u64;
        let mut first_error: Option<(usize, CoderError)> = None;
        loop {
            // A poisoned lock means another worker panicked: stop; the
            // panic is reported when it is joined.
            let next = match queue.lock() {
                Ok(mut q) => q.next(),
                Err(_) => None,
            };
            let Some((i, mut job)) = next else {
                break;
            };
            if i > failed_at.load(Ordering::Relaxed) {
                continue;
            }
            match run(&mut job) {
                Ok(n) => steps = steps.saturating_add(n),
                Err(e) => {
                    failed_at.fetch_min(i, Ordering::Relaxed);
                    if first_error.as_ref().is_none_or(|(j, _)| i < *j) {
                        first_error = Some((i, e));
                    }
                }
            }
        }
        (steps, first_error)
    };
    // A worker that panicked (a bug) reports a state error.
    let bug = || (0, Some((0, CoderError::BadState { offset: 0 })));
    std::thread::scope(|s| {
        // The calling thread is one of the workers: one thread fewer to
        // start, and the first block starts at once.
        let handles: Vec<_> = (1..workers).map(|_| s.spawn(worker)).collect();
        let here = std::panic::catch_unwind(std::panic::AssertUnwindSafe(worker));
        let mut steps = 0u64;
        let mut first: Option<(usize, CoderError)> = None;
        let results = core::iter::once(here.unwrap_or_else(|_| bug()))
            .chain(handles.into_iter().map(|h| h.join().unwrap_or_else(|_| bug())));
        for (n, e) in results {
            steps = steps.saturating_add(n);
            if let Some((i, e)) = e {
                if first.as_ref().is_none_or(|(j, _)| i < *j) {
                    first = Some((i, e));
                }
            }
        }
        match first {
            Some((_, e)) => Err(e),
            None => Ok(steps),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::log2_binomial;

    /// The results come back in item order whatever the thread count and
    /// however the items' costs differ (a slow item must not reorder them).
    #[test]
    fn map_threaded_keeps_item_order() {
        let items: Vec<u64> = (0..37).collect();
        let want: Vec<u64> = items.iter().map(|x| x * 3).collect();
        for threads in [1, 2, 3, 8, 64] {
            let got = map_threaded(&items, threads, |(): &mut (), &x| {
                if x % 5 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                x * 3
            });
            assert_eq!(got, want, "{threads} threads");
        }
    }

    /// What the decoders' output words hold before a decode in the tests
    /// that check the decoders overwrite them: alternating bit patterns in
    /// every byte, so a byte ORed in or left behind shows.
    pub(super) const GARBAGE: u64 = 0x5a5a_a5a5_0ff0_f00f;

    /// splitmix64, a fixed-seed generator for test bit arrays.
    pub(super) fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn random_bits(m: u64, density: f64, seed: u64) -> Vec<u64> {
        let mut s = seed;
        let mut w = vec![0u64; m.div_ceil(64) as usize];
        let thresh = (density * 2f64.powi(64)) as u64;
        for i in 0..m {
            if splitmix(&mut s) < thresh || density >= 1.0 {
                w[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        w
    }

    fn round_trip(w: &[u64], m: u64) -> Vec<u8> {
        let mut out = Vec::new();
        encode(w, m, &mut out);
        // Into zeroed words and into words holding garbage: the decoder
        // overwrites them either way.
        for fill in [0, GARBAGE] {
            let mut back = vec![fill; m.div_ceil(64) as usize];
            decode(&out, m, &mut back).unwrap();
            assert_eq!(back, w, "m={m} fill={fill:#x}");
        }
        out
    }

    #[test]
    fn round_trips_edge_arrays() {
        for m in [1u64, 2, 63, 64, 65, 1000] {
            for density in [0.0, 0.001, 0.1, 0.5, 0.9, 1.0] {
                let w = random_bits(m, density, m ^ 77);
                round_trip(&w, m);
            }
        }
    }

    #[test]
    fn round_trips_multi_block_and_threads() {
        let m = 2 * BLOCK_BITS + 12_345;
        let w = random_bits(m, 0.13, 5);
        let single = {
            let mut o = Vec::new();
            encode_with_threads(&w, m, &mut o, 1);
            o
        };
        let multi = round_trip(&w, m);
        assert_eq!(single, multi, "thread count must not change the bytes");
        let mut back = vec![0u64; w.len()];
        decode_with_threads(&single, m, &mut back, 1).unwrap();
        assert_eq!(back, w);
    }

    #[test]
    fn size_near_entropy_bound() {
        let m = 140_000;
        let w = random_bits(m, 0.133, 1);
        let x: u64 = w.iter().map(|v| u64::from(v.count_ones())).sum();
        let out = round_trip(&w, m);
        let bound = log2_binomial(m, x);
        let bits = out.len() as f64 * 8.0;
        assert!(bits <= payload_bits_bound(m, bound), "{bits} vs {bound}");
    }

    /// A two-block array (m, words) and its payload.
    fn two_blocks(seed: u64) -> (u64, Vec<u64>, Vec<u8>) {
        let m = BLOCK_BITS + 50_000;
        let w = random_bits(m, 0.1, seed);
        let mut out = Vec::new();
        encode(&w, m, &mut out);
        (m, w, out)
    }

    #[test]
    fn errors_report_payload_offsets_in_later_blocks() {
        // Cut the last byte: the last block's final word read fails at the
        // last complete word boundary of the payload.
        let (m, w, out) = two_blocks(11);
        let cut = &out[..out.len() - 1];
        let mut back = vec![0u64; w.len()];
        assert_eq!(
            decode(cut, m, &mut back),
            Err(CoderError::UnexpectedEnd {
                offset: cut.len() - 1
            })
        );
        // Extra bytes after the last block.
        let mut long = out.clone();
        long.extend_from_slice(&[0, 0]);
        let mut back = vec![0u64; w.len()];
        assert_eq!(
            decode(&long, m, &mut back),
            Err(CoderError::TrailingData { offset: out.len() })
        );
    }

    #[test]
    fn shifted_moves_every_offset_by_the_block_base() {
        let cases = [
            (
                CoderError::UnexpectedEnd { offset: 5 },
                CoderError::UnexpectedEnd { offset: 105 },
            ),
            (
                CoderError::RunPastEnd {
                    offset: 5,
                    position: 9,
                },
                CoderError::RunPastEnd {
                    offset: 105,
                    position: 9,
                },
            ),
            (
                CoderError::TrailingData { offset: 5 },
                CoderError::TrailingData { offset: 105 },
            ),
            (
                CoderError::BadState { offset: 5 },
                CoderError::BadState { offset: 105 },
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.shifted(100), want);
        }
        // Block-table errors are already payload-relative.
        let t = CoderError::BlockTable {
            offset: 3,
            reason: "x",
        };
        assert_eq!(t.clone().shifted(100), t);
    }

    #[test]
    fn bad_state_in_a_later_block_reports_its_payload_offset() {
        let (m, w, mut out) = two_blocks(12);
        let (len0, used) = varint::get(&out).unwrap();
        let base = used + len0 as usize;
        out[base..base + 4].copy_from_slice(&[0, 0, 0, 0]);
        let mut back = vec![0u64; w.len()];
        assert_eq!(
            decode(&out, m, &mut back),
            Err(CoderError::BadState { offset: base })
        );
    }

    #[test]
    fn bound_has_the_documented_composition() {
        // Per block: 32 bits per lane + 100; 32 bits per block-table entry;
        // 0.04% of the entropy bound. Values worked out by hand from the doc.
        let b = 10_000.0;
        assert_eq!(payload_bits_bound(1000, b), b * 1.0004 + 32.0 + 100.0);
        assert_eq!(payload_bits_bound(1 << 20, b), b * 1.0004 + 128.0 + 100.0);
        assert_eq!(payload_bits_bound(BLOCK_BITS, b), b * 1.0004 + 228.0);
        assert_eq!(
            payload_bits_bound(BLOCK_BITS + 1, b),
            b * 1.0004 + 228.0 + 132.0 + 32.0
        );
        assert_eq!(
            payload_bits_bound(3 * BLOCK_BITS + (1 << 20), b),
            b * 1.0004 + 3.0 * 228.0 + 228.0 + 3.0 * 32.0
        );
    }

    #[test]
    fn padding_bits_are_ignored() {
        for m in [100u64, 1000, 4000] {
            let mut w = random_bits(m, 0.1, m);
            let clean = w.clone();
            *w.last_mut().unwrap() |= u64::MAX << (m % 64);
            let mut out = Vec::new();
            encode(&w, m, &mut out);
            let mut back = vec![0u64; w.len()];
            decode(&out, m, &mut back).unwrap();
            assert_eq!(back, clean);
        }
    }

    #[test]
    fn zero_threads_means_the_calling_thread() {
        // 0 is a caller's "no threads": it must act like 1, not divide the
        // blocks among zero workers.
        let (m, w, out) = two_blocks(3);
        let mut again = Vec::new();
        encode_with_threads(&w, m, &mut again, 0);
        assert_eq!(again, out);
        let mut back = vec![0u64; w.len()];
        decode_with_threads(&out, m, &mut back, 0).unwrap();
        assert_eq!(back, w);
    }

    #[test]
    fn thread_count_is_one_per_core_up_to_one_per_block() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(threads_for(0), 1);
        assert_eq!(threads_for(1), 1);
        for blocks in [2u64, 3, 64] {
            assert_eq!(threads_for(blocks), cores.min(blocks as usize), "{blocks}");
        }
    }

    #[test]
    fn each_block_comes_with_its_first_bit() {
        let (m, w, out) = two_blocks(5);
        let mut seen = Vec::new();
        decode_each_block(&out, m, |first, words, bits| {
            let at = (first / 64) as usize;
            assert_eq!(words, &w[at..at + bits.div_ceil(64) as usize]);
            seen.push((first, bits));
        })
        .unwrap();
        assert_eq!(seen, [(0, BLOCK_BITS), (BLOCK_BITS, m - BLOCK_BITS)]);
    }

    #[test]
    fn output_of_the_wrong_length_is_refused() {
        let (m, w, out) = two_blocks(7);
        for len in [0, w.len() - 1, w.len() + 1] {
            let mut back = vec![0u64; len];
            assert_eq!(
                decode(&out, m, &mut back),
                Err(CoderError::OutputLength {
                    expected: w.len() as u64,
                    actual: len,
                })
            );
        }
    }

    #[test]
    fn truncation_is_an_error() {
        let m = 10_000;
        let w = random_bits(m, 0.2, 3);
        let mut out = Vec::new();
        encode(&w, m, &mut out);
        for cut in 0..out.len() {
            let mut back = vec![0u64; w.len()];
            assert!(decode(&out[..cut], m, &mut back).is_err(), "cut {cut}");
        }
    }

    /// The block streamer hands every block on in order at any thread
    /// count, stops at the first error in array order (a block's or the
    /// sink's), and reuses its buffers.
    #[cfg(feature = "std")]
    #[test]
    fn stream_blocks_keeps_order_and_stops_at_the_first_error() {
        // Block i is i % 5 + 1 words of value i; blocks 7 and 11 fail.
        let decode = |i: usize, buf: &mut Vec<u64>| {
            buf.clear();
            buf.resize(i % 5 + 1, i as u64);
            if i == 11 || i == 7 {
                Err(i)
            } else {
                Ok(())
            }
        };
        let ok = |i: usize, buf: &mut Vec<u64>| decode(i, buf).or(Ok::<(), usize>(()));
        for threads in [1usize, 2, 3, 8, 64] {
            // No errors: every block, in order.
            let mut seen = Vec::new();
            stream_blocks(23, threads, ok, |i, w| {
                assert!(w.len() == i % 5 + 1 && w.iter().all(|&x| x == i as u64));
                seen.push(i);
                Ok(())
            })
            .unwrap();
            assert_eq!(seen, (0..23).collect::<Vec<_>>(), "{threads} threads");
            // Decode errors: the first in order, after the blocks before it.
            let mut seen = Vec::new();
            let err = stream_blocks(23, threads, decode, |i, _| {
                seen.push(i);
                Ok(())
            });
            assert_eq!(err, Err(7), "{threads} threads");
            assert_eq!(seen, (0..7).collect::<Vec<_>>());
            // The sink's error stops it too.
            let mut seen = Vec::new();
            let err = stream_blocks(23, threads, ok, |i, _| {
                seen.push(i);
                if i == 3 {
                    Err(99)
                } else {
                    Ok(())
                }
            });
            assert_eq!(err, Err(99));
            assert_eq!(seen, (0..4).collect::<Vec<_>>());
        }
        // No blocks: nothing to do.
        stream_blocks(0, 2, decode, |_, _| -> Result<(), usize> { panic!("no block") }).unwrap();
    }

    /// A panic in a block decoder (a bug) reaches the caller with its own
    /// message, wherever the block is, instead of leaving the sink waiting
    /// for a block that never comes.
    #[cfg(feature = "std")]
    #[test]
    fn stream_blocks_re_raises_a_decoder_panic() {
        for threads in [1usize, 2, 3] {
            for bad in [0usize, 5, 19] {
                let run = std::panic::catch_unwind(|| {
                    stream_blocks(
                        20,
                        threads,
                        |i, buf: &mut Vec<u64>| {
                            buf.clear();
                            buf.push(i as u64);
                            if i == bad {
                                panic!("block {i} is a bug");
                            }
                            Ok::<(), ()>(())
                        },
                        |_, _| Ok(()),
                    )
                });
                let payload = run.expect_err("the panic reaches the caller");
                let text = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_default();
                assert_eq!(text, format!("block {bad} is a bug"), "{threads} threads");
            }
        }
    }
}
