//! The sending side: a [`Publisher`]'s updates stored in JetStream.

use super::{headers, pieces, NatsConfig, NatsError, SharedKind};
use crate::sync::Publisher;
use crate::sync::{Update, UpdateKind};
use async_nats::header::{NATS_MESSAGE_ID, NATS_ROLLUP};
use async_nats::jetstream;
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::HeaderMap;
use bytes::Bytes;
use std::time::Duration;
use tokio::time::Instant;

/// What a [`NatsPublisher`] has stored so far (frames the server
/// acknowledged).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PublishStats {
    /// Updates stored on the update subject.
    pub updates: u64,
    /// How many of them were full frames.
    pub full_updates: u64,
    /// Their frame bytes.
    pub update_bytes: u64,
    /// Copies of the full frame stored on the full-frame subject.
    pub full_copies: u64,
    /// Their frame bytes.
    pub full_copy_bytes: u64,
    /// Attempts that failed and were retried, and purges of an older full
    /// copy that failed (left to the next copy's purge).
    pub retries: u64,
    /// Messages stored: one per frame, or one per piece of a frame sent
    /// in pieces.
    pub messages: u64,
    /// The largest frame stored, in bytes.
    pub frame_bytes_max: u64,
    /// The most pieces one frame took (1 for frames sent whole).
    pub pieces_max: u64,
}

impl PublishStats {
    /// Every frame byte sent to the server: updates and full copies.
    pub fn bytes(&self) -> u64 {
        self.update_bytes.saturating_add(self.full_copy_bytes)
    }
}

/// Publishes one filter's updates: every update on the update subject, and
/// the latest full frame on the full-frame subject.
///
/// A frame that fits in one message goes as one; a larger one, in pieces
/// of [`NatsConfig::piece_bytes`] (by default sized from the server's
/// `max_payload`), one message each, consecutive on its subject.
pub struct NatsPublisher {
    js: jetstream::Context,
    config: NatsConfig,
    piece_bytes: usize,
    /// Full-frame copies put so far, to tell one copy's pieces from
    /// another's in their message ids.
    copies: u64,
    update_subject: String,
    full_subject: String,
    /// When the full-frame subject was last written.
    last_copy: Option<Instant>,
    /// A store failed, or the stream had to be created again: the
    /// full-frame subject may lack the latest version.
    copy_owed: bool,
    stats: PublishStats,
}

impl std::fmt::Debug for NatsPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsPublisher")
            .field("stream", &self.config.stream_name())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl NatsPublisher {
    /// A publisher on `client` for `config`'s subjects; creates the stream
    /// if it does not exist (an existing stream is used as it is).
    ///
    /// # Errors
    /// [`NatsError::Stream`] if the stream can be neither found nor
    /// created (no JetStream on the server, or a stream of that name with
    /// other subjects).
    pub async fn new(client: async_nats::Client, config: NatsConfig) -> Result<Self, NatsError> {
        let piece_bytes = config.piece_bytes_for(client.max_payload());
        let p = NatsPublisher {
            piece_bytes,
            copies: 0,
            js: config.context(client),
            update_subject: config.update_subject(),
            full_subject: config.full_subject(),
            config,
            last_copy: None,
            copy_owed: false,
            stats: PublishStats::default(),
        };
        p.ensure_stream().await?;
        Ok(p)
    }

    /// What was stored so far.
    pub fn stats(&self) -> PublishStats {
        self.stats
    }

    async fn ensure_stream(&self) -> Result<(), NatsError> {
        self.js
            .get_or_create_stream(self.config.stream_config())
            .await
            .map(drop)
            .map_err(|e| NatsError::Stream {
                stream: self.config.stream_name(),
                source: e.into(),
            })
    }

    /// Stores one message and returns its stream sequence. A failed attempt
    /// is retried after a backoff, with the stream created again if it was
    /// deleted; the `Nats-Msg-Id` header of updates makes the server drop
    /// a retry of a message it did store.
    ///
    /// A cluster electing the stream's leader answers "no stream" at once
    /// and leaves the stream lookup unanswered. Such attempts go every
    /// quarter of the request timeout, so that the store follows the
    /// election within that time, and are not counted against
    /// [`NatsConfig::publish_attempts`]; they end at `publish_attempts`
    /// request timeouts after the first attempt, the time the counted
    /// attempts could take.
    async fn store(
        &mut self,
        subject: &str,
        headers: HeaderMap,
        frame: &[u8],
    ) -> Result<u64, NatsError> {
        let payload = Bytes::copy_from_slice(frame);
        let mut backoff = Duration::ZERO;
        let (mut attempts, mut counted) = (0, 0);
        let quarter = self.config.request_timeout / 4;
        let deadline = Instant::now()
            + self
                .config
                .request_timeout
                .saturating_mul(self.config.publish_attempts.max(1));
        loop {
            attempts += 1;
            let since = Instant::now();
            let stored = async {
                self.js
                    .publish_with_headers(subject.to_owned(), headers.clone(), payload.clone())
                    .await?
                    .await
            }
            .await;
            let e = match stored {
                Ok(ack) => return Ok(ack.sequence),
                Err(e) => e,
            };
            self.copy_owed = true;
            // A timeout means the stream is there without a leader, and a
            // lookup would only wait too. Otherwise the stream is looked
            // up, and created again if it was deleted (it comes back
            // empty: the full-frame subject gets the latest version at the
            // next chance, copy_owed). The lookup (an info request, then a
            // create, each up to the request timeout) gets a quarter of
            // that timeout: unanswered, the stream has no leader. A create
            // cut short still completes on the server.
            let electing = !matches!(e.kind(), PublishErrorKind::TimedOut)
                && !matches!(
                    tokio::time::timeout(quarter, self.ensure_stream()).await,
                    Ok(Ok(()))
                );
            let give_up = if electing {
                Instant::now() >= deadline
            } else {
                counted += 1;
                counted >= self.config.publish_attempts.max(1)
            };
            if give_up {
                return Err(NatsError::Publish {
                    subject: subject.to_owned(),
                    attempts,
                    source: e.into(),
                });
            }
            self.stats.retries += 1;
            // Counted from the attempt's start: an acknowledgement that
            // timed out has waited already, and the next attempt goes at
            // once, so that the first publish after an election waits at
            // most one request timeout.
            let wait = if electing {
                quarter
            } else {
                backoff = self.config.next_backoff(backoff);
                backoff
            };
            tokio::time::sleep_until(since + wait).await;
        }
    }

    /// Stores `update` on the update subject, and a full frame also on the
    /// full-frame subject. Returns the update's stream sequence.
    ///
    /// # Errors
    /// [`NatsError::Publish`] after the configured attempts. Subscribers
    /// then see a gap at the next update and resynchronise from the next
    /// full frame; [`publish`](Self::publish) and
    /// [`refresh`](Self::refresh) put one as soon as the server takes it.
    pub async fn send(&mut self, update: &Update) -> Result<u64, NatsError> {
        let id = update.id;
        let msg_id = format!("{}.{}.{}", id.stream, id.epoch, id.seq);
        let subject = self.update_subject.clone();
        let (_, seq) = self.store_frame(&subject, update, &msg_id, false).await?;
        self.stats.updates += 1;
        self.stats.update_bytes += update.frame.len() as u64;
        if update.kind == UpdateKind::Full {
            self.stats.full_updates += 1;
            self.put_full(update).await?;
        }
        Ok(seq)
    }

    /// Stores `update`'s frame on `subject`: as one message if it fits in
    /// a piece, else piece after piece. Every message carries the
    /// identity headers, and `Nats-Msg-Id` `msg_id` (with `.i` for piece
    /// `i`) so that the server drops a retry of a message it did store.
    /// `rollup` marks a whole frame `Nats-Rollup: sub`. Returns the stream
    /// sequences of the first and the last message.
    async fn store_frame(
        &mut self,
        subject: &str,
        update: &Update,
        msg_id: &str,
        rollup: bool,
    ) -> Result<(u64, u64), NatsError> {
        let frame = &update.frame;
        let parts = pieces::cut(frame, self.piece_bytes);
        let n = parts.len();
        let (mut first, mut last) = (0, 0);
        for (i, part) in parts.into_iter().enumerate() {
            let mut h = headers::for_update(update);
            if n == 1 {
                h.insert(NATS_MESSAGE_ID, msg_id);
                if rollup {
                    h.insert(NATS_ROLLUP, "sub");
                }
            } else {
                h.insert(NATS_MESSAGE_ID, format!("{msg_id}.{i}").as_str());
                pieces::piece_headers(&mut h, frame, i, n, (i > 0).then_some(first));
            }
            last = self.store(subject, h, part).await?;
            if i == 0 {
                first = last;
            }
            self.stats.messages += 1;
        }
        self.stats.frame_bytes_max = self.stats.frame_bytes_max.max(frame.len() as u64);
        self.stats.pieces_max = self.stats.pieces_max.max(n as u64);
        Ok((first, last))
    }

    /// Stores `full` as the latest full frame. A whole frame goes with
    /// `Nats-Rollup: sub` (the server drops the one before); pieces go
    /// without it, and once the last is stored the subject is purged of
    /// everything but them, so that it never lacks a complete frame.
    async fn put_full(&mut self, full: &Update) -> Result<(), NatsError> {
        let subject = self.full_subject.clone();
        self.copies += 1;
        let id = full.id;
        let msg_id = format!("full.{}.{}.{}.{}", id.stream, id.epoch, id.seq, self.copies);
        let n = pieces::cut(&full.frame, self.piece_bytes).len() as u64;
        self.store_frame(&subject, full, &msg_id, true).await?;
        if n > 1 {
            let purged = async {
                self.js
                    .get_stream_no_info(self.config.stream_name())
                    .await?
                    .purge()
                    .filter(subject.as_str())
                    .keep(n)
                    .await
                    .map_err(async_nats::Error::from)
            }
            .await;
            // An older copy left behind costs disk, not correctness: a
            // subscriber takes the last complete frame. The next copy
            // purges it.
            if purged.is_err() {
                self.stats.retries += 1;
            }
        }
        self.stats.full_copies += 1;
        self.stats.full_copy_bytes += full.frame.len() as u64;
        self.last_copy = Some(Instant::now());
        self.copy_owed = false;
        Ok(())
    }

    /// Whether the full-frame subject should get the latest version now.
    fn copy_due(&self) -> bool {
        if self.copy_owed {
            return true;
        }
        match (self.last_copy, self.config.full_period) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(at), Some(period)) => at.elapsed() >= period,
        }
    }

    /// Publishes the publisher's next update ([`Publisher::publish`]:
    /// a delta, or a full frame when it chooses one), and puts the full
    /// frame on the full-frame subject when the full period has passed.
    ///
    /// # Errors
    /// As [`send`](Self::send). The update is consumed from `publisher`
    /// either way: a lost update is a gap that subscribers repair from the
    /// next full frame.
    pub async fn publish<F: SharedKind>(
        &mut self,
        publisher: &mut Publisher<F>,
    ) -> Result<Update, NatsError> {
        let update = publisher.publish();
        self.send(&update).await?;
        self.refresh(publisher).await?;
        Ok(update)
    }

    /// Puts the publisher's last version on the full-frame subject if the
    /// full period has passed since the last copy (or a store failed since
    /// then). Call it from a timer when the publisher is idle: a copy is
    /// put every period even when nothing changed, so that a purged stream
    /// gets a full frame back for subscribers to resynchronise from.
    /// Returns whether a copy was put.
    ///
    /// # Errors
    /// As [`send`](Self::send).
    pub async fn refresh<F: SharedKind>(
        &mut self,
        publisher: &Publisher<F>,
    ) -> Result<bool, NatsError> {
        let Some(full) = publisher.full_frame() else {
            return Ok(false);
        };
        if !self.copy_due() {
            return Ok(false);
        }
        self.put_full(&full).await?;
        Ok(true)
    }
}
