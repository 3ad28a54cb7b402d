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
//! # Faults
//!
//! A subscriber never applies a frame out of order and never holds a state
//! the publisher did not have: every frame goes through
//! [`Subscriber::receive`](crate::sync::Subscriber::receive), which leaves
//! the state unchanged on any error. Around it, [`NatsSubscriber`] re-fetches
//! the full frame after a gap (with bounded backoff), reconnects after a
//! dropped connection or a restarted server, and resynchronises after the
//! stream was purged or deleted; each step is reported as an [`Event`].

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
