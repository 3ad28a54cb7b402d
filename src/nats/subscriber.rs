//! The receiving side: a [`Subscriber`] fed from JetStream, with the
//! catch-up, resynchronisation and reconnection around it.

use super::pieces::{Assembler, Refused, Took};
use super::{NatsConfig, SharedKind};
use crate::filter::BloomFilter;
use crate::format::UpdateId;
use crate::sync::Subscriber;
use crate::sync::{SyncError, UpdateKind};
use async_nats::jetstream::{
    self,
    consumer::{
        pull::{Ordered, OrderedConfig},
        DeliverPolicy,
    },
    context::{GetStreamError, GetStreamErrorKind},
    stream::{LastRawMessageErrorKind, Stream},
    ErrorCode,
};
use futures_util::{FutureExt, StreamExt};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// What a subscriber holds, as shared with the application through
/// [`NatsSubscriber::watch`]: a filter the publisher had, and its version.
#[derive(Clone, Debug)]
pub struct Snapshot<F = BloomFilter> {
    /// The current filter; `None` until the first full frame. Shared, so
    /// readers never block the subscriber and never see a half-applied
    /// update.
    pub filter: Option<Arc<F>>,
    /// The version of [`filter`](Self::filter), if its frames carried an
    /// identity.
    pub version: Option<UpdateId>,
}

impl<F> Default for Snapshot<F> {
    fn default() -> Self {
        Snapshot {
            filter: None,
            version: None,
        }
    }
}

/// One step of a subscriber, as [`NatsSubscriber::next_event`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A frame of the update subject was taken.
    Applied {
        /// A delta, or a full frame the publisher sent.
        kind: UpdateKind,
        /// The version now held.
        version: Option<UpdateId>,
        /// The message's JetStream stream sequence.
        stream_sequence: u64,
        /// The frame's length.
        bytes: usize,
    },
    /// The latest full frame was taken from the full-frame subject: at the
    /// start, or after a gap. The deltas that follow it come next.
    Resynchronised {
        /// The version held before, if any.
        previous: Option<UpdateId>,
        /// The version now held.
        version: Option<UpdateId>,
        /// The message's JetStream stream sequence.
        stream_sequence: u64,
        /// The frame's length.
        bytes: usize,
    },
    /// A frame was refused; the state is unchanged. A gap
    /// ([`SyncError::NeedFull`]) makes the subscriber look for a newer full
    /// frame; a stale frame, another stream's, another kind's, one beyond
    /// the limits or a corrupt one is only reported.
    Skipped {
        /// The message's JetStream stream sequence (0 if unknown).
        stream_sequence: u64,
        /// Whether it came from the full-frame subject.
        from_full_subject: bool,
        /// Why [`Subscriber::receive`] refused it.
        reason: SyncError,
    },
    /// Something the subscriber needs is not there; it tries again after
    /// `retry_in` (growing with each failure, within the configured
    /// backoff bounds), and meanwhile keeps its state.
    Waiting {
        /// What is missing.
        reason: WaitReason,
        /// When it looks again.
        retry_in: Duration,
    },
    /// The pieces of a frame too large for one message were refused
    /// (missing, repeated, out of order, mixed with another frame's,
    /// longer than declared, declared above
    /// [`NatsConfig::max_frame_bytes`], or not matching the frame's CRC),
    /// and the frame with them; the state is unchanged. On the update
    /// subject the next update then shows a gap, repaired from the full
    /// frame.
    PiecesRefused {
        /// The stream sequence of the message that made the refusal
        /// certain.
        stream_sequence: u64,
        /// Whether they came from the full-frame subject.
        from_full_subject: bool,
        /// What was wrong.
        reason: String,
        /// The buffer the subscriber held for the frame when it refused it
        /// (never more than the declared length, itself within the limit).
        held_bytes: usize,
    },
    /// The stream was deleted and created anew (or replaced) since the
    /// subscriber last saw it: its history and sequence numbers restarted,
    /// so the subscriber resynchronises from the next full frame.
    StreamReplaced,
    /// Every frame was refused as stale for
    /// [`NatsConfig::stale_timeout`], and so was the full-frame subject's:
    /// the version held was one the publisher does not send (a forged
    /// frame at a late version, or a publisher restarted at an older
    /// epoch). The subscriber dropped it and took that full frame.
    Unpinned {
        /// The version it held, refused as stale by nothing it received.
        previous: Option<UpdateId>,
        /// The version now held.
        version: Option<UpdateId>,
        /// The full frame's JetStream stream sequence.
        stream_sequence: u64,
    },
}

/// Why a subscriber waits.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitReason {
    /// The JetStream stream does not exist (not created yet, or deleted).
    StreamMissing,
    /// The full-frame subject is empty (nothing published yet, or the
    /// stream was purged): the subscriber consumes updates meanwhile, and
    /// takes the first full frame that comes.
    NoFullFrame,
    /// An update is missing and the full-frame subject holds no newer
    /// version than the one held: the next full frame will do.
    NoNewerFullFrame,
    /// The server did not answer, or the connection or the consumer
    /// failed.
    Server(String),
}

/// A subscriber to one filter's subjects: [`next_event`](Self::next_event)
/// drives it, and [`watch`](Self::watch) or [`filter`](Self::filter) give
/// its current filter.
///
/// Run it in a task of its own (`loop { sub.next_event().await; }`), or
/// interleave it with other work: nothing happens between calls.
pub struct NatsSubscriber<F: SharedKind = BloomFilter> {
    js: jetstream::Context,
    config: NatsConfig,
    update_subject: String,
    full_subject: String,
    sub: Subscriber<F>,
    snapshot: watch::Sender<Snapshot<F>>,
    messages: Option<Ordered>,
    /// The stream sequence the update consumer (re)starts from; 0 while no
    /// position is known (then it starts at the stream's first message).
    next_seq: u64,
    /// A gap was seen: look for a newer full frame at `full_check_at`.
    need_full: bool,
    full_check_at: Instant,
    backoff: Duration,
    /// When the stream is looked at next, if no message came meanwhile.
    probe_at: Instant,
    /// After a failure, nothing is asked of the server before this.
    resume_at: Option<Instant>,
    /// The stream's creation time, to notice a replaced stream.
    created: Option<i128>,
    pending: VecDeque<Event>,
    /// Since when every frame has been refused as stale, if they are.
    stale_since: Option<Instant>,
    /// The update subject's frame being put together from pieces.
    assembler: Assembler,
    /// The most memory a frame in pieces held, on either subject.
    pieces_peak: usize,
    /// An update was applied and not yet shared through the watch: it is
    /// once no further message is waiting.
    share_owed: bool,
}

impl<F: SharedKind> std::fmt::Debug for NatsSubscriber<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsSubscriber")
            .field("stream", &self.config.stream_name())
            .field("version", &self.sub.version())
            .field("next_seq", &self.next_seq)
            .field("need_full", &self.need_full)
            .finish_non_exhaustive()
    }
}

/// How many times a piece of the full frame is asked for before the
/// fetch gives up and is started again after a backoff.
const PIECE_TRIES: u32 = 3;

/// Whether a message-get found no message: the full-frame copy was purged
/// (a newer one is complete).
fn purged(e: &async_nats::jetstream::stream::RawMessageError) -> bool {
    matches!(
        e.kind(),
        async_nats::jetstream::stream::RawMessageErrorKind::NoMessageFound
    )
}

/// How many pieces of the full frame are asked for at once: a few
/// round trips overlap, and the answers held (each at most the server's
/// `max_payload`, as base64 in JSON) stay a few megabytes.
const PIPELINE: usize = 4;

/// The most stream messages (updates, and each piece of a pieced frame)
/// a probe takes by message-get before it starts a consumer after them
/// (see [`NatsSubscriber::catch_up`]): a few lost with a server; a longer
/// backlog goes through the consumer.
const CATCH_UP_MAX: u64 = 64;

/// A failed stream lookup, as a reason to wait.
fn stream_error(e: GetStreamError) -> WaitReason {
    match e.kind() {
        GetStreamErrorKind::JetStream(j) if j.error_code() == ErrorCode::STREAM_NOT_FOUND => {
            WaitReason::StreamMissing
        }
        _ => server(e),
    }
}

/// A failed request, as a reason to wait.
fn server(e: impl std::fmt::Display) -> WaitReason {
    WaitReason::Server(e.to_string())
}

impl<F: SharedKind> NatsSubscriber<F> {
    /// A subscriber to `config`'s subjects that feeds `subscriber` (build it
    /// with the decode limits and, if known, the stream to follow). It
    /// talks to the server only once [`next_event`](Self::next_event) is
    /// called.
    pub fn new(client: async_nats::Client, config: NatsConfig, subscriber: Subscriber<F>) -> Self {
        let snapshot = Snapshot {
            filter: subscriber.filter().cloned().map(Arc::new),
            version: subscriber.version(),
        };
        let max_frame_bytes = config.max_frame_bytes;
        NatsSubscriber {
            js: config.context(client),
            update_subject: config.update_subject(),
            full_subject: config.full_subject(),
            config,
            sub: subscriber,
            snapshot: watch::Sender::new(snapshot),
            messages: None,
            next_seq: 0,
            need_full: false,
            full_check_at: Instant::now(),
            backoff: Duration::ZERO,
            probe_at: Instant::now(),
            resume_at: None,
            stale_since: None,
            created: None,
            pending: VecDeque::new(),
            assembler: Assembler::new(max_frame_bytes),
            pieces_peak: 0,
            share_owed: false,
        }
    }

    /// The current filter and version, updated after each taken frame,
    /// except within a backlog: updates that are already waiting when one
    /// is applied are applied first, and the watch gets the last of them
    /// (on the next call of [`next_event`](Self::next_event) after its
    /// [`Event::Applied`]). Sharing a version copies the filter, as much
    /// work as applying a delta to it; a late joiner replaying the
    /// updates since the full frame would otherwise copy it once each.
    /// [`filter`](Self::filter) and [`version`](Self::version) are always
    /// the latest.
    pub fn watch(&self) -> watch::Receiver<Snapshot<F>> {
        self.snapshot.subscribe()
    }

    /// The current filter, once a full frame has been taken.
    pub fn filter(&self) -> Option<&F> {
        self.sub.filter()
    }

    /// The version held.
    pub fn version(&self) -> Option<UpdateId> {
        self.sub.version()
    }

    /// The most memory, in bytes, that a frame arriving in pieces held
    /// while it was put together (or refused), on either subject; 0 if
    /// every frame came whole.
    pub fn pieces_peak_bytes(&self) -> usize {
        self.pieces_peak.max(self.assembler.peak_bytes())
    }

    /// The sync subscriber and the state it holds, for a restart that keeps
    /// it: a [`NatsSubscriber`] built on it resumes after its version.
    pub fn into_subscriber(self) -> Subscriber<F> {
        self.sub
    }

    /// Waits for and returns the next event. Faults of the server or the
    /// stream are events too ([`Event::Waiting`]): this never fails, and
    /// between attempts it waits with bounded backoff. Cancel-safe: an
    /// event is never lost by dropping the future, though a frame being
    /// fetched may be fetched again.
    pub async fn next_event(&mut self) -> Event {
        loop {
            if let Some(e) = self.pending.pop_front() {
                return e;
            }
            let polling = self.messages.is_some()
                && self.resume_at.is_none()
                && !(self.need_full && Instant::now() >= self.full_check_at);
            if self.share_owed && !polling {
                self.share();
            }
            if let Some(t) = self.resume_at {
                tokio::time::sleep_until(t).await;
                self.resume_at = None;
            }
            if self.messages.is_none() {
                let since = Instant::now();
                if let Err(reason) = self.start().await {
                    self.messages = None;
                    self.fail(reason, since);
                }
                continue;
            }
            if self.need_full && Instant::now() >= self.full_check_at {
                self.check_full().await;
                continue;
            }
            let probe_at = self.probe_at;
            let deadline = if self.need_full {
                probe_at.min(self.full_check_at)
            } else {
                probe_at
            };
            let Some(messages) = self.messages.as_mut() else {
                continue;
            };
            // A backlog (a late joiner's deltas since the full frame, a
            // subscriber that was away) is applied message after message
            // and shared once, when no further message is waiting: each
            // share copies the filter, which costs as much as applying a
            // delta to it.
            let next = if self.share_owed {
                match messages.next().now_or_never() {
                    Some(next) => Ok(next),
                    None => {
                        self.share_owed = false;
                        self.share();
                        continue;
                    }
                }
            } else {
                tokio::time::timeout_at(deadline, messages.next()).await
            };
            match next {
                Ok(Some(Ok(msg))) => {
                    self.probe_at = Instant::now() + self.config.probe_interval;
                    self.take(msg);
                }
                Ok(Some(Err(e))) => {
                    self.messages = None;
                    self.fail(server(e), Instant::now());
                }
                Ok(None) => {
                    self.messages = None;
                    self.fail(server("the update consumer ended"), Instant::now());
                }
                // A full-frame check is due (the loop's top does it), or
                // nothing came for a while: look at the stream.
                Err(_) if Instant::now() >= probe_at => self.probe().await,
                Err(_) => {}
            }
        }
    }

    /// After a quiet spell: is the stream still the one consumed, and has
    /// the update subject a message the consumer did not deliver? Either
    /// way the consumer is started again ([`start`](Self::start) tells a
    /// missing or replaced stream).
    ///
    /// A server that does not answer (a lost connection, a cluster electing
    /// the stream's new leader) leaves the consumer as it is: it may well
    /// live on a server that is still up and deliver as soon as the stream
    /// has a leader again, while a new one could not be created before
    /// then. The probe is repeated after the backoff, counted from this
    /// one's start, so that a timed-out probe is followed at once and the
    /// subscriber notices the new leader within one request timeout.
    async fn probe(&mut self) {
        let since = Instant::now();
        self.probe_at = since + self.config.probe_interval;
        let stream = match self.js.get_stream(self.config.stream_name()).await {
            Ok(s) => s,
            Err(e) => {
                let reason = stream_error(e);
                if reason == WaitReason::StreamMissing {
                    self.messages = None;
                    return self.fail(reason, since);
                }
                return self.probe_later(reason, since);
            }
        };
        let info = stream.cached_info();
        if Some(info.created.unix_timestamp_nanos()) != self.created {
            self.messages = None;
            return;
        }
        if info.state.last_sequence < self.next_seq {
            return;
        }
        // Something was stored since the consumer's position: if it is an
        // update, the consumer missed it.
        match stream
            .get_last_raw_message_by_subject(&self.update_subject)
            .await
        {
            Ok(m) if m.sequence >= self.next_seq => {
                self.catch_up(&stream, m.sequence).await;
                self.messages = None;
            }
            Ok(_) => {}
            Err(e) if matches!(e.kind(), LastRawMessageErrorKind::NoMessageFound) => {}
            Err(e) => self.probe_later(server(e), since),
        }
    }

    /// Takes the updates from `next_seq` to `last` by message-get, which
    /// the stream's leader answers alone: after a lost leader a new
    /// consumer also needs the cluster's meta leader, and on a loaded
    /// cluster its creation can take seconds more. Messages are taken in
    /// stream order from the start of a frame (the frame being put
    /// together is dropped first, as when a consumer starts), so that
    /// nothing is applied twice or out of order; the consumer started
    /// next begins after the last one taken. More than [`CATCH_UP_MAX`]
    /// are left to it; a failed request ends the catch-up there.
    async fn catch_up<I>(&mut self, stream: &Stream<I>, last: u64) {
        let from = self.next_seq;
        if from == 0 || last < from || last - from >= CATCH_UP_MAX {
            return;
        }
        self.assembler.reset();
        let subject = self.update_subject.clone();
        let mut gets = futures_util::stream::iter(from..=last)
            .map(|seq| stream.get_first_raw_message_by_subject(subject.as_str(), seq))
            .buffered(PIPELINE);
        let mut at = from;
        while let Some(Ok(m)) = gets.next().await {
            if m.sequence < at {
                continue;
            }
            if m.sequence > last {
                break;
            }
            at = m.sequence.saturating_add(1);
            self.take_parts(Some(&m.headers), &m.payload, m.sequence);
        }
    }

    /// The next wait after a failure of an attempt begun at `since`: the
    /// backoff, counted from the attempt's start (a request that timed out
    /// has waited already), and when it ends.
    fn backoff_from(&mut self, since: Instant) -> (Instant, Duration) {
        self.backoff = self.config.next_backoff(self.backoff);
        let at = since + self.backoff;
        (at, at.saturating_duration_since(Instant::now()))
    }

    /// Reports `reason` and holds off the next request, with backoff.
    fn fail(&mut self, reason: WaitReason, since: Instant) {
        let (at, retry_in) = self.backoff_from(since);
        self.resume_at = Some(at);
        self.pending.push_back(Event::Waiting { reason, retry_in });
    }

    /// Reports `reason` and probes again after the backoff, keeping the
    /// consumer.
    fn probe_later(&mut self, reason: WaitReason, since: Instant) {
        let (at, retry_in) = self.backoff_from(since);
        self.probe_at = at;
        self.pending.push_back(Event::Waiting { reason, retry_in });
    }

    /// Looks for the full frame again later, with backoff.
    fn full_later(&mut self, reason: WaitReason, since: Instant) {
        self.need_full = true;
        let (at, retry_in) = self.backoff_from(since);
        self.full_check_at = at;
        self.pending.push_back(Event::Waiting { reason, retry_in });
    }

    /// Shares the state held now.
    fn share(&mut self) {
        self.share_owed = false;
        self.snapshot.send_replace(Snapshot {
            filter: self.sub.filter().cloned().map(Arc::new),
            version: self.sub.version(),
        });
    }

    /// Finds the stream, takes the full frame if one is needed, and starts
    /// the update consumer where this subscriber's updates resume.
    async fn start(&mut self) -> Result<(), WaitReason> {
        let stream = self
            .js
            .get_stream(self.config.stream_name())
            .await
            .map_err(stream_error)?;
        let info = stream.cached_info();
        let created = info.created.unix_timestamp_nanos();
        let replaced = self.created.is_some_and(|c| c != created)
            || self.next_seq > info.state.last_sequence.saturating_add(1);
        self.created = Some(created);
        if replaced {
            self.next_seq = 0;
            self.need_full = true;
            self.pending.push_back(Event::StreamReplaced);
        }
        if self.sub.filter().is_none() || self.need_full || self.next_seq == 0 {
            self.fetch_full(&stream).await?;
        }
        // The updates since the full frame (or since the last one taken),
        // before the consumer: a late joiner holds the head as soon as the
        // messages can be read, without waiting for a consumer's creation.
        if self.next_seq > 0 && info.state.last_sequence >= self.next_seq {
            match stream
                .get_last_raw_message_by_subject(&self.update_subject)
                .await
            {
                Ok(m) if m.sequence >= self.next_seq => self.catch_up(&stream, m.sequence).await,
                Ok(_) => {}
                Err(e) if matches!(e.kind(), LastRawMessageErrorKind::NoMessageFound) => {}
                Err(e) => return Err(server(e)),
            }
        }
        // What it holds now is shared before the consumer is asked for,
        // which can take a request timeout or more while a server is down.
        if self.share_owed {
            self.share();
        }
        let deliver_policy = match self.next_seq {
            0 => DeliverPolicy::All,
            start_sequence => DeliverPolicy::ByStartSequence { start_sequence },
        };
        let consumer = stream
            .create_consumer(OrderedConfig {
                filter_subject: self.update_subject.clone(),
                deliver_policy,
                ..Default::default()
            })
            .await
            .map_err(server)?;
        self.messages = Some(consumer.messages().await.map_err(server)?);
        // The consumer starts at a frame's first message: a frame half put
        // together comes again whole.
        self.assembler.reset();
        self.probe_at = Instant::now() + self.config.probe_interval;
        Ok(())
    }

    /// After a gap: the full-frame subject, once more.
    async fn check_full(&mut self) {
        let since = Instant::now();
        let stream = match self.js.get_stream_no_info(self.config.stream_name()).await {
            Ok(s) => s,
            Err(e) => return self.full_later(server(e), since),
        };
        if let Err(reason) = self.fetch_full(&stream).await {
            self.full_later(reason, since);
        }
    }

    /// Reports a refused frame in pieces.
    fn refused(&mut self, r: Refused, stream_sequence: u64, from_full_subject: bool) {
        self.pieces_peak = self.pieces_peak.max(r.held_bytes);
        self.pending.push_back(Event::PiecesRefused {
            stream_sequence,
            from_full_subject,
            reason: r.reason,
            held_bytes: r.held_bytes,
        });
    }

    /// The latest complete full frame and the stream sequence of its last
    /// message: the last message of the full-frame subject, or, for a
    /// frame in pieces, the pieces from the first (its [`FIRST_SEQ`]
    /// header) to it. `Ok(None)` when the subject is empty or its last
    /// frame is being written (the pieces are read again later).
    ///
    /// [`FIRST_SEQ`]: super::pieces::FIRST_SEQ
    async fn full_frame<I>(
        &mut self,
        stream: &Stream<I>,
    ) -> Result<Option<(bytes::Bytes, u64)>, WaitReason> {
        let last = match stream
            .get_last_raw_message_by_subject(&self.full_subject)
            .await
        {
            Ok(m) => m,
            Err(e) if matches!(e.kind(), LastRawMessageErrorKind::NoMessageFound) => {
                return Ok(None)
            }
            Err(e) => return Err(server(e)),
        };
        let info = match super::pieces::piece_info(Some(&last.headers)) {
            Ok(None) => return Ok(Some((last.payload, last.sequence))),
            Ok(Some(info)) => info,
            Err(reason) => {
                let r = Refused {
                    reason,
                    held_bytes: 0,
                };
                self.refused(r, last.sequence, true);
                return Ok(None);
            }
        };
        if info.index + 1 < info.count {
            // A copy being written now: the one before it was purged
            // only if this one is complete, so wait for it.
            return Ok(None);
        }
        // The headers are a stranger's until the frame's CRC and signature
        // are checked: a size over the limit, or more pieces than the
        // subject keeps, is refused before a single piece is fetched.
        let too_big = info.frame_bytes > self.config.max_frame_bytes;
        if too_big || i64::from(info.count) > self.config.delta_history {
            let r = Refused {
                reason: format!(
                    "the full frame's last piece declares {} bytes in {} pieces \
                     (at most {} bytes, and {} messages on the subject)",
                    info.frame_bytes,
                    info.count,
                    self.config.max_frame_bytes,
                    self.config.delta_history
                ),
                held_bytes: 0,
            };
            self.refused(r, last.sequence, true);
            return Ok(None);
        }
        let first = info.first_seq.unwrap_or(last.sequence);
        // Pieces of one copy are stored one after the other by one
        // publisher; a few other messages between them are tolerated, a
        // claim reaching far back is not followed.
        let span_limit = u64::from(info.count).saturating_mul(2).saturating_add(16);
        if first > last.sequence || last.sequence - first >= span_limit {
            let r = Refused {
                reason: format!(
                    "the last piece of the full frame, at {}, places the first at {first}",
                    last.sequence
                ),
                held_bytes: 0,
            };
            self.refused(r, last.sequence, true);
            return Ok(None);
        }
        let mut assembler = Assembler::new(self.config.max_frame_bytes);
        let mut at = first;
        let mut result = None;
        // One request per sequence of the span, PIPELINE of them in flight,
        // answers taken in order: the pieces come in one round trip's time
        // each PIPELINE pieces instead of one each. Across a gap in the
        // subject two requests return the same message; the second is
        // skipped, so that what is taken is what one request after the
        // other would have found.
        let subject = self.full_subject.clone();
        let mut gets = futures_util::stream::iter(first..=last.sequence)
            .map(|seq| stream.get_first_raw_message_by_subject(subject.as_str(), seq))
            .buffered(PIPELINE);
        while let Some(mut got) = gets.next().await {
            // A request that failed (a server slow under load, a timeout)
            // is asked again for the next message after the last one
            // taken, which is what it would have returned, a few times
            // before the fetch gives up: the pieces already put together
            // are kept, not fetched all over again.
            let mut tries = 1;
            while tries < PIECE_TRIES && got.as_ref().is_err_and(|e| !purged(e)) {
                tries += 1;
                got = stream
                    .get_first_raw_message_by_subject(subject.as_str(), at)
                    .await;
            }
            let m = match got {
                Ok(m) if m.sequence < at => continue,
                Ok(m) => m,
                // Purged meanwhile: a newer copy is complete.
                Err(e) if purged(&e) => break,
                Err(e) => return Err(server(e)),
            };
            if m.sequence > last.sequence {
                break;
            }
            at = m.sequence.saturating_add(1);
            let (cut, took) = assembler.push(Some(&m.headers), &m.payload);
            if let Some(r) = cut {
                self.refused(r, m.sequence, true);
            }
            match took {
                Took::Pending => {}
                Took::Frame(f) if m.sequence == last.sequence => {
                    result = Some((f, m.sequence));
                    break;
                }
                // A whole frame before the last piece: an older copy.
                Took::Frame(_) => {}
                Took::Refused(r) => {
                    self.refused(r, m.sequence, true);
                    break;
                }
            }
        }
        self.pieces_peak = self.pieces_peak.max(assembler.peak_bytes());
        Ok(result)
    }

    /// Takes the latest full frame if it is newer than the state held, and
    /// moves the update consumer to the message after it.
    async fn fetch_full<I>(&mut self, stream: &Stream<I>) -> Result<(), WaitReason> {
        let Some((payload, sequence)) = self.full_frame(stream).await? else {
            self.full_later(WaitReason::NoFullFrame, Instant::now());
            return Ok(());
        };
        let previous = self.sub.version();
        match self.sub.receive(&payload) {
            Ok(_) => {
                self.need_full = false;
                self.backoff = Duration::ZERO;
                // A new state: the wait for a frame after it starts over.
                self.stale_since = None;
                self.share();
                self.pending.push_back(Event::Resynchronised {
                    previous,
                    version: self.sub.version(),
                    stream_sequence: sequence,
                    bytes: payload.len(),
                });
                // Every update after this full frame is stored after it, in
                // the same stream: resume right behind it (back, if updates
                // after it were refused while the gap was open).
                let resume = sequence.saturating_add(1);
                if self.next_seq != resume {
                    self.next_seq = resume;
                    self.messages = None;
                }
            }
            Err(SyncError::Stale { .. }) if self.pinned() => {
                // Frames have been stale for stale_timeout and the latest
                // full frame is too: what is held is not the publisher's
                // line. Take that frame instead, or keep the state if it
                // cannot be taken.
                let saved = self.sub.clone();
                self.sub.reset();
                if let Err(reason) = self.sub.receive(&payload) {
                    self.sub = saved;
                    self.pending.push_back(Event::Skipped {
                        stream_sequence: sequence,
                        from_full_subject: true,
                        reason,
                    });
                    self.full_later(WaitReason::NoNewerFullFrame, Instant::now());
                    return Ok(());
                }
                self.need_full = false;
                self.stale_since = None;
                self.backoff = Duration::ZERO;
                self.share();
                self.pending.push_back(Event::Unpinned {
                    previous,
                    version: self.sub.version(),
                    stream_sequence: sequence,
                });
                self.next_seq = sequence.saturating_add(1);
                self.messages = None;
            }
            Err(reason) => {
                let stale = matches!(reason, SyncError::Stale { .. });
                self.pending.push_back(Event::Skipped {
                    stream_sequence: sequence,
                    from_full_subject: true,
                    reason,
                });
                if stale && self.next_seq == 0 {
                    // Held state at or past this frame: what it lacks comes
                    // after it.
                    self.next_seq = sequence.saturating_add(1);
                }
                if self.need_full || self.sub.filter().is_none() {
                    let why = if stale {
                        WaitReason::NoNewerFullFrame
                    } else {
                        WaitReason::NoFullFrame
                    };
                    self.full_later(why, Instant::now());
                }
            }
        }
        Ok(())
    }

    /// Whether every frame has been refused as stale for the configured
    /// `stale_timeout`.
    fn pinned(&self) -> bool {
        self.stale_since
            .is_some_and(|t| t.elapsed() >= self.config.stale_timeout)
    }

    /// Feeds one message of the update subject to the subscriber: a whole
    /// frame at once, a piece to the assembler (the frame goes to the
    /// subscriber with its last piece).
    fn take(&mut self, msg: jetstream::Message) {
        let stream_sequence = msg.info().map_or(0, |i| i.stream_sequence);
        self.take_parts(
            msg.message.headers.as_ref(),
            &msg.message.payload,
            stream_sequence,
        );
    }

    /// [`take`](Self::take) for a message's parts: its headers, payload
    /// and stream sequence.
    fn take_parts(
        &mut self,
        headers: Option<&async_nats::HeaderMap>,
        payload: &bytes::Bytes,
        stream_sequence: u64,
    ) {
        let (cut, took) = self.assembler.push(headers, payload);
        if let Some(r) = cut {
            self.refused(r, stream_sequence, false);
        }
        // The consumer resumes after the last whole frame or refusal, so
        // that a frame half put together is read again from its first
        // piece.
        if stream_sequence > 0 && !self.assembler.pending() {
            self.next_seq = stream_sequence.saturating_add(1);
        }
        let frame = match took {
            Took::Frame(f) => f,
            Took::Pending => return,
            Took::Refused(r) => return self.refused(r, stream_sequence, false),
        };
        self.pieces_peak = self.pieces_peak.max(self.assembler.peak_bytes());
        match self.sub.receive(&frame) {
            Ok(kind) => {
                self.stale_since = None;
                if kind == UpdateKind::Full {
                    self.need_full = false;
                }
                self.backoff = Duration::ZERO;
                self.share_owed = true;
                self.pending.push_back(Event::Applied {
                    kind,
                    version: self.sub.version(),
                    stream_sequence,
                    bytes: frame.len(),
                });
            }
            Err(reason) => {
                if matches!(reason, SyncError::NeedFull { .. }) && !self.need_full {
                    self.need_full = true;
                    self.full_check_at = Instant::now();
                }
                if matches!(reason, SyncError::Stale { .. }) {
                    self.stale_since.get_or_insert_with(Instant::now);
                    if self.pinned() && !self.need_full {
                        // Look at the full-frame subject: if it is stale
                        // too, the held version is not the publisher's.
                        self.need_full = true;
                        self.full_check_at = Instant::now();
                    }
                }
                self.pending.push_back(Event::Skipped {
                    stream_sequence,
                    from_full_subject: false,
                    reason,
                });
            }
        }
    }
}
