//! Versions over time: a publisher that sends whichever is smaller, a delta
//! or a full frame (and a full frame every N updates so receivers that missed
//! something resynchronise), and a subscriber that applies frames in order and
//! reports a gap, a stale frame or a wrong stream instead of silently
//! diverging.
//!
//! Every frame a [`Publisher`] sends carries an update identity
//! ([`UpdateId`]: stream, epoch, sequence number; docs/FORMAT.md section 5),
//! and a [`Subscriber`] checks it before it decodes anything:
//!
//! * a delta applies only to the version it was made from (sequence s − 1
//!   of the same epoch); a missed delta is a gap ([`SyncError::NeedFull`]),
//!   a duplicated, replayed or late one is stale ([`SyncError::Stale`]),
//!   including a replay after the filter returned to an earlier content
//!   (A → B → A), which content digests alone cannot tell apart;
//! * a full frame older than (or the same as) the held version is stale, so
//!   a late full frame cannot roll the subscriber back;
//! * a restarted publisher uses a larger epoch, and its first full frame
//!   supersedes everything of the old epoch;
//! * frames of another stream are refused ([`SyncError::WrongStream`]).
//!
//! On top of the order, a delta names the content digests of its base and
//! result ([`crate::delta`]): the subscriber keeps the digest of the filter
//! it holds, so a delta for another base is refused after the frame checks
//! alone (work in proportion to the frame, not to m), and a result whose
//! bits do not match is never installed. The digests cover the bits (and
//! the parameters), not the key count n, which the format calls
//! informative: the count a subscriber reports is the frame's.
//!
//! Frames without an identity (format versions 1 and 2, or
//! [`crate::encode`]) are still accepted by a subscriber that holds nothing
//! or holds such a frame; ordered only by digests, they cannot detect an
//! A → B → A replay or a late full frame. A subscriber that holds an
//! identified version refuses unidentified frames
//! ([`SyncError::Unordered`]).

use crate::delta;
use crate::filter::{BloomFilter, FilterError, FilterParams};
use crate::format::{self, Coding, DecodeError, DecodeLimits, UpdateId};
use crate::kind::Kind;
use crate::kinds::counting::CountingBloomFilter;
use ed25519_dalek::{SigningKey, VerifyingKey};
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
    /// The version this frame is (a full frame) or produces (a delta).
    pub id: UpdateId,
    /// The frame to send.
    pub frame: Vec<u8>,
}

/// What a publisher's versions are taken from.
#[derive(Clone, Debug)]
enum Source<F> {
    /// Counts, so that keys can be removed; each version is their view as
    /// `F` (a standard filter's bits).
    Counts(CountingBloomFilter, fn(&CountingBloomFilter) -> F),
    /// The filter itself, changed by the application between updates.
    Filter(F),
}

/// The sending side: each update is the smaller of a delta against the
/// last published version and a full frame, numbered by an [`UpdateId`].
///
/// A `Publisher<F>` publishes filters of kind `F`: [`Publisher::new`]
/// makes one from a filter of any kind, which the application changes
/// through [`Publisher::filter_mut`] between updates;
/// [`Publisher::counting`] makes one for standard filters backed by
/// counts, so that [`Publisher::remove`] works. [`PublisherOptions`] sets
/// the stream, epoch, period of full frames and coding.
#[derive(Clone, Debug)]
pub struct Publisher<F: Kind = BloomFilter> {
    source: Source<F>,
    coding: Coding,
    last: Option<F>,
    /// The identity `last` was published under.
    last_id: Option<UpdateId>,
    since_full: u32,
    full_every: u32,
    /// The identity of the next update.
    next: UpdateId,
    /// The key its frames are signed with, if any.
    signing_key: Option<SigningKey>,
}

/// The clock as an epoch: microseconds since the Unix epoch, so that a
/// publisher restarted after the clock moved on supersedes its earlier
/// incarnation.
fn clock_epoch() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// How a [`Publisher`] numbers and paces its updates, and codes its full
/// frames. The default publishes stream 0 in an epoch taken from the
/// clock, a full frame at least every 16 updates, coded `Auto`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublisherOptions {
    /// The stream its updates carry (a subscriber can follow one stream).
    pub stream: u64,
    /// The epoch of its first update; `None` takes the clock (microseconds
    /// since the Unix epoch), so that a publisher restarted after the
    /// clock moved on supersedes its earlier incarnation. A publisher that
    /// restarts without its state must use a larger epoch than any it used
    /// before, or subscribers refuse its frames as stale: persist a
    /// counter here rather than trust a clock that may step back.
    pub epoch: Option<u64>,
    /// Every `full_every`-th update (counting from the first after a full
    /// frame) is forced to be full; 1 sends only full frames.
    pub full_every: u32,
    /// The coding of its full frames (the table on [`Coding`] says what
    /// each kind writes).
    pub coding: Coding,
    /// The key that signs every frame it publishes
    /// ([`sign_frame`](crate::format::sign_frame)), for subscribers that
    /// take only frames signed by keys they hold
    /// ([`Subscriber::verifying_keys`]). `None` publishes unsigned frames.
    pub signing_key: Option<SigningKey>,
}

impl Default for PublisherOptions {
    fn default() -> Self {
        PublisherOptions {
            stream: 0,
            epoch: None,
            full_every: 16,
            coding: Coding::Auto,
            signing_key: None,
        }
    }
}

impl Publisher<BloomFilter> {
    /// A publisher of standard filters with `params`, backed by counts, so
    /// that [`Publisher::remove`] takes keys out: each version is the
    /// counts' view as a standard filter.
    ///
    /// ```
    /// use compressed_bloom::{FilterParams, Publisher, PublisherOptions};
    /// let opts = PublisherOptions { stream: 3, full_every: 10, ..Default::default() };
    /// let mut publisher = Publisher::counting(FilterParams::new(100_000, 3, 1), opts)?;
    /// publisher.insert(b"a");
    /// assert!(publisher.remove(b"a"));
    /// assert_eq!(publisher.publish().id.stream, 3);
    /// # Ok::<(), compressed_bloom::FilterError>(())
    /// ```
    ///
    /// # Errors
    /// Parameters out of range; [`FilterError::SchemeNotForKind`] for
    /// BIP37's or BIP158's hashing (a BIP37 filter publishes through
    /// [`Publisher::new`]).
    pub fn counting(params: FilterParams, opts: PublisherOptions) -> Result<Self, FilterError> {
        let counts = CountingBloomFilter::with_any_scheme(params)?;
        let view = CountingBloomFilter::to_bloom;
        Ok(Self::from_source(Source::Counts(counts, view), opts))
    }

    /// Adds a key (to the counts, or to the filter of a publisher made by
    /// [`Publisher::new`]).
    pub fn insert(&mut self, key: &[u8]) {
        match &mut self.source {
            Source::Counts(c, _) => c.insert(key),
            Source::Filter(f) => f.insert(key),
        }
    }

    /// Removes a key; false if it cannot be present, or if this publisher
    /// keeps no counts (one made by [`Publisher::new`]).
    pub fn remove(&mut self, key: &[u8]) -> bool {
        match &mut self.source {
            Source::Counts(c, _) => c.remove(key),
            Source::Filter(_) => false,
        }
    }
}

impl<F: Kind> Publisher<F> {
    /// A publisher of `filter`'s kind, starting from `filter`; change it
    /// with [`Publisher::filter_mut`] between updates.
    ///
    /// ```
    /// use compressed_bloom::kinds::ribbon::RibbonFilter;
    /// use compressed_bloom::{Publisher, PublisherOptions, Subscriber};
    /// let filter = RibbonFilter::from_keys([b"a", b"b"], 0.01, 1)?;
    /// let mut publisher = Publisher::new(filter, PublisherOptions::default());
    /// let mut subscriber = Subscriber::<RibbonFilter>::default();
    /// subscriber.receive(&publisher.publish().frame)?;
    /// assert_eq!(subscriber.filter(), publisher.filter());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(filter: F, opts: PublisherOptions) -> Self {
        Self::from_source(Source::Filter(filter), opts)
    }

    fn from_source(source: Source<F>, opts: PublisherOptions) -> Self {
        Publisher {
            source,
            coding: opts.coding,
            last: None,
            last_id: None,
            since_full: 0,
            full_every: opts.full_every.max(1),
            next: UpdateId {
                stream: opts.stream,
                epoch: opts.epoch.unwrap_or_else(clock_epoch),
                seq: 0,
            },
            signing_key: opts.signing_key,
        }
    }

    /// Signs the updates from the next one on with `key` (`None`: unsigned).
    /// To rotate keys without a gap, subscribers first hold both the old
    /// and the new key ([`Subscriber::set_verifying_keys`]), then the
    /// publisher moves to the new one, then subscribers drop the old one.
    pub fn set_signing_key(&mut self, key: Option<SigningKey>) {
        self.signing_key = key;
    }

    /// The filter the next update will describe, borrowed, for a publisher
    /// made by [`Publisher::new`]; `None` for one backed by counts
    /// ([`Publisher::current`] makes their view).
    pub fn filter(&self) -> Option<&F> {
        match &self.source {
            Source::Filter(f) => Some(f),
            Source::Counts(..) => None,
        }
    }

    /// The filter the next update will describe, for a publisher made by
    /// [`Publisher::new`]; `None` for one backed by counts (change those
    /// through [`Publisher::insert`] and [`Publisher::remove`]).
    pub fn filter_mut(&mut self) -> Option<&mut F> {
        match &mut self.source {
            Source::Filter(f) => Some(f),
            Source::Counts(..) => None,
        }
    }

    /// The filter the next update will describe, as an owned copy (the
    /// counts' view for a publisher backed by counts; else a clone of
    /// [`Publisher::filter`]).
    pub fn current(&self) -> F {
        match &self.source {
            Source::Filter(f) => f.clone(),
            Source::Counts(c, view) => view(c),
        }
    }

    /// The identity the next update will carry.
    pub fn next_id(&self) -> UpdateId {
        self.next
    }

    /// A full frame of the last published version, for a subscriber that
    /// lost a frame and reported [`SyncError::NeedFull`]: it takes this
    /// frame (same identity as the last update) and the deltas after it.
    /// `None` before the first [`publish`](Self::publish).
    pub fn full_frame(&self) -> Option<Update> {
        let last = self.last.as_ref()?;
        let id = self.last_id?;
        Some(Update {
            kind: UpdateKind::Full,
            id,
            frame: self.signed(last.encode_frame(self.coding, Some(id))),
        })
    }

    /// `frame`, signed with the publisher's key if it has one. Our own
    /// frame is one whole frame, so signing it cannot fail; were it to,
    /// the frame would go unsigned, and a subscriber that takes only
    /// signed frames would refuse it (never a state the publisher did not
    /// have).
    fn signed(&self, frame: Vec<u8>) -> Vec<u8> {
        match &self.signing_key {
            Some(key) => crate::format::sign_frame(&frame, key).unwrap_or(frame),
            None => frame,
        }
    }

    /// The frame for the current state: the smaller of a delta against the
    /// last published version and a full frame, or a full frame when none was
    /// sent yet, `full_every` updates have passed since the last one, or no
    /// delta describes the change.
    pub fn publish(&mut self) -> Update {
        let cur = self.current();
        let id = self.next;
        let due = self.since_full.saturating_add(1) >= self.full_every;
        let delta = match &self.last {
            Some(last) if !due && id.seq > 0 => F::encode_delta(last, &cur, Some(id)),
            _ => None,
        };
        let full = cur.encode_frame(self.coding, Some(id));
        let mut update = match delta {
            Some(d) if d.len() < full.len() => {
                self.since_full = self.since_full.saturating_add(1);
                Update {
                    kind: UpdateKind::Delta,
                    id,
                    frame: d,
                }
            }
            _ => {
                self.since_full = 0;
                Update {
                    kind: UpdateKind::Full,
                    id,
                    frame: full,
                }
            }
        };
        update.frame = self.signed(core::mem::take(&mut update.frame));
        // Sequence numbers run out after 2^64 updates: move to the next
        // epoch, whose first update (seq 0) is always a full frame.
        self.next = match id.seq.checked_add(1) {
            Some(seq) => UpdateId { seq, ..id },
            None => UpdateId {
                epoch: id.epoch.saturating_add(1),
                seq: 0,
                ..id
            },
        };
        self.last = Some(cur);
        self.last_id = Some(id);
        update
    }
}

/// Why a subscriber could not take a frame. On every error the held filter
/// is unchanged.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyncError {
    /// The frame is a delta that does not apply to what this subscriber holds
    /// (an update was missed, or nothing was received yet, or its base
    /// digest or parameters differ). Wait for (or ask for) a full frame.
    #[error("need a full frame: {reason}")]
    NeedFull {
        /// What did not match.
        reason: String,
    },
    /// The frame is a version this subscriber already has or has passed: a
    /// duplicate, a replay or a late frame. Nothing to do.
    #[error("stale frame: version {}.{} of stream {}, this subscriber holds {}.{}", got.epoch, got.seq, got.stream, held.epoch, held.seq)]
    Stale {
        /// The version held.
        held: UpdateId,
        /// The frame's identity.
        got: UpdateId,
    },
    /// The frame belongs to another stream than the one followed.
    #[error("frame of stream {found}, this subscriber follows stream {expected}")]
    WrongStream {
        /// The stream followed.
        expected: u64,
        /// The frame's stream.
        found: u64,
    },
    /// The frame has no update identity, but the subscriber holds an
    /// identified version: an unordered frame could roll it back.
    #[error("frame has no update identity; this subscriber holds version {}.{} of stream {}", held.epoch, held.seq, held.stream)]
    Unordered {
        /// The version held.
        held: UpdateId,
    },
    /// The subscriber takes only signed frames
    /// ([`Subscriber::verifying_keys`]), and this one is not signed.
    #[error("unsigned frame: this subscriber takes only frames signed by its keys")]
    Unsigned,
    /// The frame is signed by a key the subscriber does not hold.
    #[error(
        "frame signed by key {}, which this subscriber does not hold",
        format::key_id_hex(key_id)
    )]
    UnknownKey {
        /// The signer's key id.
        key_id: [u8; 8],
    },
    /// The frame's signature does not verify with the key it names: it was
    /// altered after signing, or forged.
    #[error(
        "bad signature on a frame that names key {}",
        format::key_id_hex(key_id)
    )]
    BadSignature {
        /// The key id the frame names.
        key_id: [u8; 8],
    },
    /// The frame itself is invalid.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// The filter a subscriber holds, its digest (kept so that a delta for
/// another base is refused without reading the filter) and its version.
#[derive(Clone, Debug)]
struct Held<F> {
    filter: F,
    digest: u64,
    id: Option<UpdateId>,
}

/// The receiving side, for filters of kind `F`: frames of another kind
/// are refused ([`DecodeError::WrongKind`]); a `Subscriber<AnyFilter>`
/// takes every kind.
#[derive(Clone, Debug)]
pub struct Subscriber<F: Kind = BloomFilter> {
    held: Option<Held<F>>,
    stream: Option<u64>,
    limits: DecodeLimits,
    /// The keys a frame must be signed by; empty takes unsigned frames.
    keys: Vec<VerifyingKey>,
    /// The stream given to [`Subscriber::following`], kept by
    /// [`Subscriber::reset`].
    follow: Option<u64>,
}

/// A subscriber under the default limits.
impl<F: Kind> Default for Subscriber<F> {
    fn default() -> Self {
        Self::new(DecodeLimits::default())
    }
}

impl<F: Kind> Subscriber<F> {
    /// A subscriber of kind `F` (`AnyFilter` for every kind) that decodes
    /// with `limits` and follows the stream of the first identified full
    /// frame it takes.
    ///
    /// Under [`DecodeLimits::default`] a subscriber takes every frame a
    /// [`Publisher`] sends with its defaults, of every kind, including the
    /// first frame of an empty publisher: a large filter that holds few
    /// keys yet (an empty cache, a filter planned for more keys than it
    /// has) codes to a frame tens of thousands of times smaller than the
    /// filter (1,746 bytes for 78 MB at 10^7 keys planned, f = 0.001).
    /// Such a frame costs what the publisher declared, so the limits bound
    /// it by memory, not by its length: at most ⌈max_m/8⌉ bytes (512 MiB
    /// by default) for any full frame, and the expansion ratio only above
    /// [`DecodeLimits::expansion_floor`]. A subscriber that knows the
    /// filters it follows states it: `max_m` (and `kinds`) at the size it
    /// expects refuses anything larger before allocating, whatever the
    /// frame's length; `expansion_floor: 0` holds every full frame to
    /// `max_expansion` times its length (docs/HARDENING.md, "Expansion").
    ///
    /// ```
    /// use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
    /// use compressed_bloom::{AnyFilter, DecodeLimits, Subscriber};
    /// let any: Subscriber<AnyFilter> = Subscriber::new(DecodeLimits::default());
    /// let partitioned = Subscriber::<PartitionedBloomFilter>::default();
    /// assert!(any.filter().is_none() && partitioned.filter().is_none());
    /// ```
    pub fn new(limits: DecodeLimits) -> Self {
        Subscriber {
            held: None,
            stream: None,
            limits,
            keys: Vec::new(),
            follow: None,
        }
    }

    /// A subscriber of kind `F` that refuses identified frames of any
    /// stream but `stream`. Frames without an identity (versions 1 and 2,
    /// or a version-3 frame sent without one) are still taken while it
    /// holds nothing or an unidentified version, ordered by digests as for
    /// any subscriber; once it holds an identified version they are refused
    /// as [`SyncError::Unordered`].
    pub fn following(stream: u64, limits: DecodeLimits) -> Self {
        Subscriber {
            held: None,
            stream: Some(stream),
            limits,
            keys: Vec::new(),
            follow: Some(stream),
        }
    }

    /// Forgets the filter and version held, keeping the limits, the keys
    /// and the stream given to [`Subscriber::following`]: the next full
    /// frame is taken whatever its version. For a receiver that finds it
    /// holds a version its publisher does not send (a publisher restarted
    /// at an older epoch, or a forged frame taken without verifying keys),
    /// which makes every real frame stale.
    pub fn reset(&mut self) {
        self.held = None;
        self.stream = self.follow;
    }

    /// This subscriber, taking only frames signed by one of `keys`: an
    /// unsigned frame, one signed by another key, or one whose signature
    /// does not verify is refused ([`SyncError::Unsigned`],
    /// [`SyncError::UnknownKey`], [`SyncError::BadSignature`]) after the
    /// frame's cheap checks and before its order or payload is looked at,
    /// and the held filter is unchanged. To rotate keys, give the old and
    /// the new one while the publisher moves to the new, then the new one
    /// alone ([`Subscriber::set_verifying_keys`]).
    ///
    /// Without keys (the default) a subscriber trusts whoever can put
    /// frames in front of it: CRCs and digests catch accidents, not
    /// forgeries, so a forged frame with a valid CRC can replace what it
    /// holds, or pin it with a version no real publisher reaches. Only the
    /// channel (TLS, the broker's permissions) then keeps others out.
    ///
    /// ```
    /// use compressed_bloom::ed25519_dalek::SigningKey;
    /// use compressed_bloom::{BloomFilter, FilterParams, Publisher, PublisherOptions, Subscriber, SyncError};
    /// let key = SigningKey::from_bytes(&[1; 32]);
    /// let f = BloomFilter::new(FilterParams::new(1 << 12, 3, 0))?;
    /// let opts = PublisherOptions { signing_key: Some(key.clone()), ..Default::default() };
    /// let mut publisher = Publisher::new(f.clone(), opts);
    /// let mut subscriber = Subscriber::<BloomFilter>::default().verifying_keys([key.verifying_key()]);
    /// subscriber.receive(&publisher.publish().frame)?;
    /// // An unsigned frame of the same filter is refused.
    /// let mut unsigned = Publisher::new(f, PublisherOptions::default());
    /// assert!(matches!(subscriber.receive(&unsigned.publish().frame), Err(SyncError::Unsigned)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn verifying_keys(mut self, keys: impl IntoIterator<Item = VerifyingKey>) -> Self {
        self.set_verifying_keys(keys);
        self
    }

    /// Replaces the keys frames must be signed by (empty: take unsigned
    /// frames, as [`Subscriber::new`] does). The held filter is kept.
    pub fn set_verifying_keys(&mut self, keys: impl IntoIterator<Item = VerifyingKey>) {
        self.keys = keys.into_iter().collect();
    }

    /// The current filter, once a full frame has arrived.
    pub fn filter(&self) -> Option<&F> {
        self.held.as_ref().map(|h| &h.filter)
    }

    /// The version held, if the frame it came from carried an identity.
    pub fn version(&self) -> Option<UpdateId> {
        self.held.as_ref().and_then(|h| h.id)
    }

    /// The digest of the filter held (what a delta must name as its
    /// base), once a full frame has arrived.
    pub fn digest(&self) -> Option<u64> {
        self.held.as_ref().map(|h| h.digest)
    }

    /// Takes the next frame. A full frame replaces the state if it is newer;
    /// a delta is applied only to the version it was made from.
    ///
    /// Cost: the frame checks (header, limits, CRC, kind, order, and a
    /// delta's base digest against the one held) are proportional to the
    /// frame; a refused frame costs nothing more, whatever the size of the
    /// filter held. A taken full frame costs its decode and one digest of
    /// the new filter; a taken delta its decode and one pass over the
    /// filter that builds the result and checks its digest.
    ///
    /// # Errors
    /// [`SyncError::Stale`], [`SyncError::NeedFull`],
    /// [`SyncError::WrongStream`], [`SyncError::Unordered`] as described in
    /// the module docs; [`SyncError::Decode`] for an invalid frame or one of
    /// another kind. The state is unchanged on error.
    pub fn receive(&mut self, frame: &[u8]) -> Result<UpdateKind, SyncError> {
        let (h, payload) = format::checked_whole_frame(frame, &self.limits)?;
        if !self.keys.is_empty() {
            // After the cheap checks (header, limits, CRC), before the
            // order and any payload byte: one Ed25519 verification.
            format::verify_signature(frame, &h, &self.keys).map_err(|e| match e {
                DecodeError::Unsigned => SyncError::Unsigned,
                DecodeError::UnknownKey { key_id } => SyncError::UnknownKey { key_id },
                DecodeError::BadSignature { key_id } => SyncError::BadSignature { key_id },
                other => SyncError::Decode(other),
            })?;
        }
        let is_delta = h.filter_type.is_delta();
        if !is_delta && !F::accepts(&h) {
            return Err(SyncError::Decode(DecodeError::WrongKind {
                found: h.kind,
                expected: F::KIND,
            }));
        }
        self.check_order(h.identity, is_delta)?;
        if !is_delta {
            let filter = F::decode_frame(&h, payload, &self.limits)?;
            if self.stream.is_none() {
                self.stream = h.identity.map(|id| id.stream);
            }
            self.held = Some(Held {
                digest: filter.digest(),
                filter,
                id: h.identity,
            });
            return Ok(UpdateKind::Full);
        }
        let Some(held) = self.held.as_mut() else {
            return Err(SyncError::NeedFull {
                reason: "a delta arrived before any full frame".into(),
            });
        };
        let d = delta::delta_header(h, payload)?;
        match held.filter.apply_delta(held.digest, frame, &d, &self.limits) {
            Ok(digest) => {
                held.digest = digest;
                held.id = h.identity;
                // An identified delta on an unidentified base gives the
                // subscriber its first identity: from now on it follows
                // that stream, as after an identified full frame.
                if self.stream.is_none() {
                    self.stream = h.identity.map(|id| id.stream);
                }
                Ok(UpdateKind::Delta)
            }
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

    /// The ordering rules of docs/FORMAT.md section 5, checked before the
    /// payload is decoded.
    fn check_order(&self, got: Option<UpdateId>, is_delta: bool) -> Result<(), SyncError> {
        let held = self.held.as_ref().and_then(|h| h.id);
        let Some(got) = got else {
            return match held {
                Some(held) => Err(SyncError::Unordered { held }),
                None => Ok(()),
            };
        };
        if let Some(expected) = self.stream {
            if got.stream != expected {
                return Err(SyncError::WrongStream {
                    expected,
                    found: got.stream,
                });
            }
        }
        let Some(held) = held else {
            // Nothing held, or an unidentified version: digests decide.
            return Ok(());
        };
        if got.version() <= held.version() {
            return Err(SyncError::Stale { held, got });
        }
        if is_delta && (got.epoch != held.epoch || got.seq != held.seq.saturating_add(1)) {
            return Err(SyncError::NeedFull {
                reason: format!(
                    "gap: the delta turns version {}.{} into {}.{}, this subscriber holds {}.{}",
                    got.epoch,
                    got.seq.saturating_sub(1),
                    got.epoch,
                    got.seq,
                    held.epoch,
                    held.seq
                ),
            });
        }
        Ok(())
    }
}
