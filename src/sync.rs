//! Versions over time: a publisher that sends whichever is smaller, a delta
//! or a full frame (and a full frame every N updates so receivers that missed
//! something resynchronise), and a subscriber that applies frames in order and
//! reports a gap instead of silently diverging.
//!
//! Gaps are detected by content digest: a delta names the filter it applies
//! to ([`crate::delta`]), so a missed, reordered or duplicated delta does not
//! match the subscriber's current filter and is refused.

use crate::counting::CountingBloomFilter;
use crate::delta;
use crate::filter::{BloomFilter, FilterError, FilterParams};
use crate::format::{self, DecodeError, DecodeLimits};
use thiserror::Error;

/// What a published frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateKind {
    /// A whole filter (raw or coded).
    Full,
    /// A delta against the previously published version.
    Delta,
}

/// One published frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Update {
    /// Full or delta.
    pub kind: UpdateKind,
    /// The frame to send.
    pub frame: Vec<u8>,
}

/// The sending side: a counting filter (so keys can be removed) whose bit
/// view is published.
#[derive(Clone, Debug)]
pub struct Publisher {
    counts: CountingBloomFilter,
    last: Option<BloomFilter>,
    since_full: u32,
    full_every: u32,
}

impl Publisher {
    /// A publisher for filters with `params`; every `full_every`-th update
    /// (counting from the first after a full frame) is forced to be full.
    /// `full_every = 1` sends only full frames.
    ///
    /// # Errors
    /// Parameters out of range.
    pub fn new(params: FilterParams, full_every: u32) -> Result<Self, FilterError> {
        Ok(Publisher {
            counts: CountingBloomFilter::new(params)?,
            last: None,
            since_full: 0,
            full_every: full_every.max(1),
        })
    }

    /// Adds a key.
    pub fn insert(&mut self, key: &[u8]) {
        self.counts.insert(key);
    }

    /// Removes a key; false if it cannot be present.
    pub fn remove(&mut self, key: &[u8]) -> bool {
        self.counts.remove(key)
    }

    /// The filter the next update will describe.
    pub fn current(&self) -> BloomFilter {
        self.counts.to_bloom()
    }

    /// The frame for the current state: the smaller of a delta against the
    /// last published version and a full frame, or a full frame when none was
    /// sent yet or `full_every` updates have passed since the last one.
    pub fn publish(&mut self) -> Update {
        let cur = self.counts.to_bloom();
        let full = format::encode(&cur);
        let due = self.since_full + 1 >= self.full_every;
        let delta = match &self.last {
            Some(last) if !due => delta::encode_delta(last, &cur).ok(),
            _ => None,
        };
        let update = match delta {
            Some(d) if d.len() < full.len() => {
                self.since_full += 1;
                Update {
                    kind: UpdateKind::Delta,
                    frame: d,
                }
            }
            _ => {
                self.since_full = 0;
                Update {
                    kind: UpdateKind::Full,
                    frame: full,
                }
            }
        };
        self.last = Some(cur);
        update
    }
}

/// Why a subscriber could not take a frame.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyncError {
    /// The frame is a delta that does not apply to what this subscriber holds
    /// (an update was missed or reordered, or nothing was received yet). The
    /// held filter is unchanged; wait for (or ask for) a full frame.
    #[error("need a full frame: {reason}")]
    NeedFull {
        /// What did not match.
        reason: String,
    },
    /// The frame itself is invalid.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// The receiving side.
#[derive(Clone, Debug, Default)]
pub struct Subscriber {
    filter: Option<BloomFilter>,
    limits: DecodeLimits,
}

impl Subscriber {
    /// A subscriber that decodes with `limits`.
    pub fn new(limits: DecodeLimits) -> Self {
        Subscriber {
            filter: None,
            limits,
        }
    }

    /// The current filter, once a full frame has arrived.
    pub fn filter(&self) -> Option<&BloomFilter> {
        self.filter.as_ref()
    }

    /// Takes the next frame. A full frame replaces the state; a delta is
    /// applied only to the filter it was made from.
    ///
    /// # Errors
    /// [`SyncError::NeedFull`] for a delta that does not fit the held filter;
    /// [`SyncError::Decode`] for an invalid frame. The state is unchanged on
    /// error.
    pub fn receive(&mut self, frame: &[u8]) -> Result<UpdateKind, SyncError> {
        // The header alone picks the path; decode and apply check the CRC
        // (once) before using anything else.
        let h = format::header::parse(frame, &self.limits)?;
        if !h.filter_type.is_delta() {
            self.filter = Some(format::decode_with_limits(frame, &self.limits)?);
            return Ok(UpdateKind::Full);
        }
        let Some(base) = self.filter.as_mut() else {
            return Err(SyncError::NeedFull {
                reason: "a delta arrived before any full frame".into(),
            });
        };
        match delta::apply(base, frame, &self.limits) {
            Ok(()) => Ok(UpdateKind::Delta),
            Err(DecodeError::WrongBase { expected, actual }) => Err(SyncError::NeedFull {
                reason: format!(
                    "the delta applies to filter {expected:016x}, this subscriber holds {actual:016x}"
                ),
            }),
            Err(e @ DecodeError::ParamsMismatch { .. }) => Err(SyncError::NeedFull {
                reason: e.to_string(),
            }),
            Err(e) => Err(e.into()),
        }
    }
}
