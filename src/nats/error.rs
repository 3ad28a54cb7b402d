//! What can go wrong between this crate and a NATS server.

use thiserror::Error;

/// An error of the NATS layer. Frames refused by the subscriber are not
/// errors: they are reported as [`Event::Skipped`](super::Event::Skipped)
/// and the subscriber keeps its state.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum NatsError {
    /// A subject prefix or filter name that cannot form the subjects
    /// (empty, or holding a wildcard, a space or, for the filter name, a
    /// dot).
    #[error("invalid {what} {name:?}: {why}")]
    InvalidName {
        /// "prefix" or "filter name".
        what: &'static str,
        /// The name given.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Creating or looking up the JetStream stream failed.
    #[error("JetStream stream {stream}: {source}")]
    Stream {
        /// The stream's name.
        stream: String,
        /// The client's error.
        #[source]
        source: async_nats::Error,
    },
    /// The server did not store a frame, after the configured attempts.
    #[error("publishing to {subject} failed after {attempts} attempts: {source}")]
    Publish {
        /// Where the frame was going.
        subject: String,
        /// How many times it was tried.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        source: async_nats::Error,
    },
}
