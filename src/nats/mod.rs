//! Fleet distribution over NATS JetStream: one [`NatsPublisher`] sends a
//! [`Publisher`](crate::sync::Publisher)'s updates, any number of
//! [`NatsSubscriber`]s drive a [`Subscriber`](crate::sync::Subscriber) each,
//! and JetStream keeps what a late joiner or a restarted subscriber needs to
//! catch up.
//!
//! # Layout on the server
//!
//! One JetStream stream per filter ([`NatsConfig::stream_name`]) holds two
//! subjects:
//!
//! * `<prefix>.<filter>.delta`, every update in publication order: the
//!   deltas and the full frames the publisher chose (its first, every
//!   `full_every`-th, and any delta that would be larger than the full
//!   frame). The last [`NatsConfig::delta_history`] are kept.
//! * `<prefix>.<filter>.full`, the latest full frame only: each message
//!   there is published with `Nats-Rollup: sub`, which makes the server drop
//!   the earlier ones. The publisher puts a copy there whenever it sends a
//!   full frame and at least every [`NatsConfig::full_period`], so a late
//!   joiner starts near the head.
//!
//! Both subjects live in one stream so that they share one sequence: a
//! subscriber that fetched the full frame stored at stream sequence `s`
//! consumes the update subject from `s + 1`, and no update published after
//! that full frame can fall between the fetch and the consumer's start. A
//! separate stream for full frames would need a second, racy lookup to
//! find where the deltas resume.
//!
//! Each message also carries the update identity in headers
//! (`Cbloom-Stream`, `Cbloom-Epoch` and `Cbloom-Seq`, decimal, and
//! `Cbloom-Kind`, `full` or `delta`), so that a consumer can route or
//! filter without decoding the frame. The subscriber does not trust them:
//! [`Subscriber::receive`](crate::sync::Subscriber::receive) checks the
//! identity inside the frame, under its CRC.
//!
//! # Frames larger than one message
//!
//! A server refuses a message above its `max_payload` (1 MiB by default;
//! NATS advises against more than 8 MiB, and 64 MiB is the hard limit),
//! and a filter of 10^6 to 10^7 keys is a frame of 2 to 20 MB. A frame
//! larger than [`NatsConfig::piece_bytes`] therefore travels as pieces:
//! consecutive messages on its own subject, each with the piece headers
//! (index, count, the frame's length and its CRC-32C), and a subscriber
//! puts them back together within [`NatsConfig::max_frame_bytes`],
//! refusing missing, repeated, reordered, interleaved or oversized pieces
//! and a frame whose CRC disagrees ([`Event::PiecesRefused`]), its state
//! unchanged. A frame that fits travels as one message, as before.
//!
//! The pieces are messages of this layer's own stream, not JetStream's
//! Object Store: an object lives in a stream of its own (`OBJ_<bucket>`),
//! so an update stored there would have no place in the update subject's
//! sequence, and a late joiner would again need a second, racy lookup to
//! learn which deltas follow the full frame it fetched. In the one stream,
//! the full frame's last piece has a stream sequence like any message, and
//! the subscriber resumes right after it, whatever the frame's size. A copy
//! of the full frame in pieces is written without a rollup, and once its
//! last piece is stored the publisher purges the full-frame subject of
//! everything else, so that the subject always holds one complete frame.
//!
//! # Clusters
//!
//! [`NatsConfig::replicas`] sets how many servers of a JetStream cluster
//! keep the stream (3 to survive the loss of any one). Give the clients
//! every server's URL: a subscriber whose server dies reconnects to
//! another and resumes where it was.
//!
//! When the stream's leader dies, the other two elect a new one (4 to 9 s
//! with nats-server 2.9, which has no setting for it); until then every
//! request times out. Both sides wait for the new leader by asking again
//! as soon as a request has timed out ([`NatsConfig::request_timeout`];
//! backoff counts from each attempt's start), so each notices it within
//! one timeout. A subscriber resumes from the stream sequence after the
//! last update it took, not from a full frame: its consumer, if it lived
//! on a server that is still up, delivers the next update as soon as it
//! is stored; otherwise a probe ([`NatsConfig::probe_interval`]) finds
//! the updates it was not given, takes them by message-get (which the new
//! stream leader answers alone, while a new consumer also waits for the
//! cluster's meta leader) and starts a consumer after them. A late joiner
//! likewise fetches the full frame's pieces and the updates since, a few
//! requests at a time, before its consumer exists, and a backlog of
//! updates is applied before it is shared once
//! ([`NatsSubscriber::watch`]). A piece whose request fails (a server slow
//! under load) is asked for again, up to three times, keeping the pieces
//! already taken; only then does the fetch start over after a backoff.
//! A publisher told that no stream takes its subject (what a cluster
//! without a stream leader answers) looks the stream up, to create it
//! again if it was deleted, and waits at most a quarter of the request
//! timeout for that; unanswered, it tries the store again every quarter
//! of the timeout, so that it stores within that time of the election.
//!
//! # Faults
//!
//! A subscriber never applies a frame out of order, and every frame goes
//! through [`Subscriber::receive`](crate::sync::Subscriber::receive), which
//! leaves the state unchanged on any error. That it never holds a state the
//! publisher did not have rests on who can put frames on the subjects:
//!
//! - A subscriber given the publisher's verifying keys
//!   ([`Subscriber::verifying_keys`](crate::sync::Subscriber::verifying_keys);
//!   the publisher signs with
//!   [`PublisherOptions::signing_key`](crate::sync::PublisherOptions::signing_key))
//!   takes only frames the publisher signed, whatever the broker lets
//!   through: forged frames are skipped as
//!   [`SyncError::Unsigned`](crate::sync::SyncError::Unsigned) or
//!   [`SyncError::UnknownKey`](crate::sync::SyncError::UnknownKey). What is
//!   left to someone who may publish on the subjects is denial: replaying
//!   old signed frames (refused as stale) or filling the stream.
//! - Without keys it trusts everyone who may publish there: CRCs and
//!   digests catch accidents, not forgeries. A forged full frame at a
//!   later version replaces the filter, a forged delta that claims the next
//!   version moves it, and a frame at the last version there is pins it,
//!   so that the publisher's real frames are refused as stale. A
//!   [`NatsSubscriber`] does not stay pinned: once every frame has been
//!   stale for [`NatsConfig::stale_timeout`] and the full-frame subject's
//!   is too, it drops what it holds for that frame
//!   ([`Event::Unpinned`]), until the next forgery. Only the broker's
//!   permissions keep others out: docs/fleet-permissions.conf lets the
//!   publisher's user alone publish on the subjects.
//!
//! Around what `receive` checks, [`NatsSubscriber`] re-fetches the full
//! frame after a gap (with bounded backoff), reconnects after a dropped
//! connection or a restarted server, and resynchronises after the stream
//! was purged or deleted; each step is reported as an [`Event`].

mod config;
mod error;
internal_modules!(headers);
internal_modules!(pieces);
mod publisher;
mod subscriber;

pub use config::NatsConfig;
pub use error::NatsError;
pub use publisher::{NatsPublisher, PublishStats};
pub use subscriber::{Event, NatsSubscriber, Snapshot, WaitReason};

/// What a filter kind needs to travel through this layer: the crate's
/// [`Kind`](crate::Kind), and to be shared across tasks. Every kind of the
/// crate has it; `AnyFilter` carries any kind on one subject.
pub trait SharedKind: crate::Kind + Send + Sync + 'static {}
impl<F: crate::Kind + Send + Sync + 'static> SharedKind for F {}
