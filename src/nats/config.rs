//! Names (subjects, stream) and tunables shared by both sides.

use super::NatsError;
use async_nats::jetstream::stream;
use std::time::Duration;

/// Where a filter's frames go and how often the full frame is refreshed.
/// Publisher and subscribers of one filter must use the same prefix, filter
/// name and stream name; the tunables may differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NatsConfig {
    prefix: String,
    filter: String,
    /// How many messages the stream keeps per subject: the update history
    /// a subscriber that was away can still replay (older ones are dropped
    /// and such a subscriber resynchronises from the full frame instead).
    /// A frame sent in pieces counts one message per piece, so this must
    /// be well above twice the pieces of a full frame. The full-frame
    /// subject keeps one frame whatever this is.
    pub delta_history: i64,
    /// The longest time between two copies of the full frame on the
    /// full-frame subject while updates are published: how far behind the
    /// head a late joiner may start (it then replays the deltas since), and
    /// how long a subscriber that lost a delta after a purge waits.
    /// `None` puts a copy only when the publisher sends a full frame.
    ///
    /// 60 s by default. A copy costs a full frame, a delta a small part
    /// of one: with 10^6 keys at 0.1% churn, a copy every 2 s made 90% of
    /// the bytes stored (2 MB copies against 8 kB deltas), while each
    /// delta a late joiner replays from an older copy costs it one pass
    /// over the filter (20-50 ms for that 25 MB filter). With large
    /// filters and fast updates, shorten it so that a late joiner's replay
    /// stays short. Keep the updates of one period well within
    /// [`delta_history`](Self::delta_history): a late joiner whose copy is
    /// older than the history kept waits for the next copy.
    pub full_period: Option<Duration>,
    /// The first wait after a failure (a missing stream, a lost connection,
    /// no full frame to resynchronise from); each further failure doubles
    /// it, up to [`max_backoff`](Self::max_backoff). A success resets it.
    pub min_backoff: Duration,
    /// The longest wait between two attempts, so that a subscriber neither
    /// spins against a missing stream nor waits long once it is back.
    /// Backoff counts from an attempt's start, so an attempt that took
    /// its whole [`request_timeout`](Self::request_timeout) is followed at
    /// once when the backoff is no longer. 2 s by default.
    pub max_backoff: Duration,
    /// How long a subscriber waits for an update before it checks that the
    /// stream is still there and its consumer still delivers: a deleted or
    /// replaced stream, or a consumer lost in a server restart or with a
    /// killed server, is not otherwise reported by the client (its own
    /// idle heartbeats take 30 s). Each probe is one request to the
    /// server per quiet subscriber; a probe the server does not answer is
    /// repeated after the backoff and leaves the consumer in place. 2 s by
    /// default.
    pub probe_interval: Duration,
    /// How many times the publisher tries to store a frame (recreating the
    /// stream if it is gone) before it gives up with
    /// [`NatsError::Publish`]. 10 by default: about 20 s of timeouts with
    /// the default request timeout, longer than a leader election. The
    /// attempts made while a cluster elects the stream's leader (it
    /// answers "no stream" and its lookup goes unanswered) come every
    /// quarter of the request timeout and are not counted; they end that
    /// many request timeouts after the first attempt.
    pub publish_attempts: u32,
    /// How many servers of a JetStream cluster keep a copy of the stream,
    /// when the publisher creates it (1 to 5; an existing stream keeps its
    /// own). With 3 (R3) the stream survives the loss of any one server:
    /// every frame is stored on three servers and acknowledged once two
    /// have it, and when the stream's leader dies the other two elect a
    /// new one (a few seconds during which publishing waits and retries)
    /// and go on with nothing lost. It costs three times the disk and the
    /// replication traffic, and each publish waits for a quorum of two
    /// servers instead of one. 1 (the default) fits a single server.
    pub replicas: usize,
    /// The largest piece of a frame, in bytes: a larger frame travels as
    /// several messages on its subject (see the module docs). `None` (the
    /// default) takes three quarters of the server's `max_payload`, less
    /// 8 KiB for headers: the stream's message-get API, with which a
    /// subscriber fetches the full frame, returns a piece as base64 in
    /// JSON, and that answer too must fit in `max_payload`. A larger value
    /// is lowered to that bound, so that every piece can be fetched back.
    pub piece_bytes: Option<usize>,
    /// The largest frame a subscriber puts together from pieces, in bytes:
    /// a frame declared larger is refused at its first piece, before any
    /// of it is buffered. 1 GiB by default, as
    /// [`DecodeLimits::max_frame_len`](crate::DecodeLimits::max_frame_len).
    pub max_frame_bytes: u64,
    /// How long one JetStream request (a stream lookup, a message fetch,
    /// a publish's acknowledgement) may take before it counts as failed
    /// and is retried with backoff. When a cluster loses the stream's
    /// leader, requests go unanswered until a new one is elected (4 to 9 s
    /// after a killed leader with nats-server 2.9): the publisher and the
    /// subscribers then notice the new leader within one timeout, so a
    /// resync after a lost leader takes the election plus about twice
    /// this. 2 s by default: a request answered normally takes
    /// milliseconds (a piece of a frame, at most `max_payload`, included),
    /// and one that times out is only asked again (publishes carry a
    /// message id that makes the server drop a repeat); on a loaded
    /// server or a slow link, raise it.
    pub request_timeout: Duration,
    /// How long every frame may be refused as stale before a subscriber
    /// suspects its own version: a frame at a version no real publisher
    /// reaches (forged by someone who may publish on the subjects, when
    /// the subscriber has no verifying keys), or a publisher restarted at
    /// an older epoch (a clock that stepped back), makes the publisher's
    /// real frames stale for good. After this long, if the full-frame
    /// subject also holds a frame refused as stale, the subscriber drops
    /// what it holds for that frame ([`Event::Unpinned`](super::Event::Unpinned)).
    pub stale_timeout: Duration,
}

/// Checks one part of a subject: the characters NATS gives a meaning to
/// (wildcards, the token separator, whitespace) are refused.
fn check(what: &'static str, name: &str, dots: bool) -> Result<(), NatsError> {
    let bad = |why| {
        Err(NatsError::InvalidName {
            what,
            name: name.to_owned(),
            why,
        })
    };
    if name.is_empty() {
        return bad("empty");
    }
    if name.contains(['*', '>']) || name.chars().any(char::is_whitespace) {
        return bad("holds a wildcard or whitespace");
    }
    if !dots && name.contains('.') {
        return bad("holds a dot (a filter name is one subject token)");
    }
    if name.split('.').any(str::is_empty) {
        return bad("has an empty subject token");
    }
    Ok(())
}

impl NatsConfig {
    /// Subjects `<prefix>.<filter>.delta` and `<prefix>.<filter>.full`.
    /// `prefix` may span several tokens (`fleet.eu`); `filter` is one.
    ///
    /// Defaults: 1024 updates of history, a full frame at least every 60 s,
    /// backoff from 100 ms to 2 s, a probe after 2 s without updates, 10
    /// publish attempts, one replica, pieces sized from the server's
    /// `max_payload`, frames of at most 1 GiB, 2 s per request, 30 s of
    /// stale frames before a pinned version is suspected.
    ///
    /// # Errors
    /// [`NatsError::InvalidName`] for a name that cannot form the subjects.
    pub fn new(prefix: &str, filter: &str) -> Result<Self, NatsError> {
        check("prefix", prefix, true)?;
        check("filter name", filter, false)?;
        Ok(NatsConfig {
            prefix: prefix.to_owned(),
            filter: filter.to_owned(),
            delta_history: 1024,
            full_period: Some(Duration::from_secs(60)),
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            probe_interval: Duration::from_secs(2),
            publish_attempts: 10,
            replicas: 1,
            piece_bytes: None,
            max_frame_bytes: 1 << 30,
            request_timeout: Duration::from_secs(2),
            stale_timeout: Duration::from_secs(30),
        })
    }

    /// The subject of every update, in order.
    pub fn update_subject(&self) -> String {
        format!("{}.{}.delta", self.prefix, self.filter)
    }

    /// The subject that keeps the latest full frame.
    pub fn full_subject(&self) -> String {
        format!("{}.{}.full", self.prefix, self.filter)
    }

    /// The JetStream stream holding both subjects: `CBLOOM_<prefix>_<filter>`
    /// with the prefix's dots (and any character a stream name cannot
    /// hold) as `_`.
    pub fn stream_name(&self) -> String {
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect()
        };
        format!("CBLOOM_{}_{}", clean(&self.prefix), clean(&self.filter))
    }

    /// The stream as the publisher creates it: file storage (so that a
    /// restarted server still has the history and the full frame), the
    /// history limit per subject, rollup headers allowed (the full-frame
    /// subject's one-message rule), and [`replicas`](Self::replicas)
    /// copies.
    pub(crate) fn stream_config(&self) -> stream::Config {
        stream::Config {
            name: self.stream_name(),
            subjects: vec![self.update_subject(), self.full_subject()],
            max_messages_per_subject: self.delta_history.max(1),
            storage: stream::StorageType::File,
            discard: stream::DiscardPolicy::Old,
            allow_rollup: true,
            allow_direct: false,
            num_replicas: self.replicas.clamp(1, 5),
            ..Default::default()
        }
    }

    /// A JetStream context on `client` with the request timeout.
    pub(crate) fn context(&self, client: async_nats::Client) -> async_nats::jetstream::Context {
        let mut js = async_nats::jetstream::new(client);
        js.set_timeout(self.request_timeout);
        js
    }

    /// The piece size for a server whose `max_payload` is `max_payload`:
    /// the configured one within the bound a message-get answer allows.
    pub(crate) fn piece_bytes_for(&self, max_payload: usize) -> usize {
        let bound = (max_payload / 4 * 3).saturating_sub(8 << 10);
        self.piece_bytes.map_or(bound, |p| p.min(bound)).max(1024)
    }

    /// The wait after `current`: doubled, within the configured bounds.
    pub(crate) fn next_backoff(&self, current: Duration) -> Duration {
        current
            .saturating_mul(2)
            .clamp(self.min_backoff, self.max_backoff.max(self.min_backoff))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_stay_within_what_a_message_get_can_return() {
        let mut c = NatsConfig::new("p", "f").unwrap();
        let mib = 1 << 20;
        // Default: ¾ of max_payload less 8 KiB (base64 of a piece, in
        // JSON, must fit in max_payload).
        assert_eq!(c.piece_bytes_for(mib), 786_432 - 8192);
        c.piece_bytes = Some(100_000);
        assert_eq!(c.piece_bytes_for(mib), 100_000);
        // Above the bound: lowered to it.
        c.piece_bytes = Some(mib);
        assert_eq!(c.piece_bytes_for(mib), 786_432 - 8192);
        // Never below 1 KiB.
        c.piece_bytes = Some(10);
        assert_eq!(c.piece_bytes_for(mib), 1024);
    }

    #[test]
    fn names_that_cannot_form_subjects_are_refused() {
        for (prefix, filter) in [
            ("", "f"),
            ("p", ""),
            ("p.*", "f"),
            ("p", "f.g"),
            ("p", "f>"),
            ("p q", "f"),
            ("p..q", "f"),
            (".p", "f"),
        ] {
            assert!(
                NatsConfig::new(prefix, filter).is_err(),
                "{prefix:?} {filter:?}"
            );
        }
        let c = NatsConfig::new("fleet.eu", "blocked-ips").unwrap();
        assert_eq!(c.update_subject(), "fleet.eu.blocked-ips.delta");
        assert_eq!(c.full_subject(), "fleet.eu.blocked-ips.full");
        assert_eq!(c.stream_name(), "CBLOOM_fleet_eu_blocked-ips");
    }

    #[test]
    fn backoff_doubles_within_bounds() {
        let c = NatsConfig::new("p", "f").unwrap();
        assert_eq!(c.next_backoff(Duration::ZERO), c.min_backoff);
        assert_eq!(c.next_backoff(c.min_backoff), c.min_backoff * 2);
        assert_eq!(c.next_backoff(c.max_backoff), c.max_backoff);
    }
}
