//! The update identity in message headers, so that a consumer can route,
//! filter or log frames without decoding them.
//!
//! The headers are a copy: the identity that counts is the one inside the
//! frame, under its CRC, which
//! [`Subscriber::receive`](crate::sync::Subscriber::receive) checks.
//! [`identity`] is for applications that look at messages without a
//! subscriber.

use crate::format::UpdateId;
use crate::sync::{Update, UpdateKind};
use async_nats::HeaderMap;

/// The update's stream number (decimal).
pub const STREAM: &str = "Cbloom-Stream";
/// The publisher's epoch (decimal).
pub const EPOCH: &str = "Cbloom-Epoch";
/// The version's sequence number within the epoch (decimal).
pub const SEQ: &str = "Cbloom-Seq";
/// [`FULL`] or [`DELTA`].
pub const KIND: &str = "Cbloom-Kind";
/// The value of [`KIND`] for a full frame.
pub const FULL: &str = "full";
/// The value of [`KIND`] for a delta.
pub const DELTA: &str = "delta";

internal! {
/// The headers describing `update`.
pub fn for_update(update: &Update) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(STREAM, update.id.stream.to_string().as_str());
    h.insert(EPOCH, update.id.epoch.to_string().as_str());
    h.insert(SEQ, update.id.seq.to_string().as_str());
    h.insert(
        KIND,
        match update.kind {
            UpdateKind::Full => FULL,
            UpdateKind::Delta => DELTA,
        },
    );
    h
}
}

internal! {
/// The kind and identity a message's headers claim; `None` if any is
/// missing or malformed.
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // for the CLI and tests
pub fn identity(headers: &HeaderMap) -> Option<(UpdateKind, UpdateId)> {
    let num = |name: &str| headers.get(name)?.as_str().parse::<u64>().ok();
    let kind = match headers.get(KIND)?.as_str() {
        FULL => UpdateKind::Full,
        DELTA => UpdateKind::Delta,
        _ => return None,
    };
    Some((
        kind,
        UpdateId {
            stream: num(STREAM)?,
            epoch: num(EPOCH)?,
            seq: num(SEQ)?,
        },
    ))
}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_refuse_garbage() {
        let update = Update {
            kind: UpdateKind::Delta,
            id: UpdateId {
                stream: 7,
                epoch: u64::MAX,
                seq: 12,
            },
            frame: vec![],
        };
        let mut h = for_update(&update);
        assert_eq!(identity(&h), Some((UpdateKind::Delta, update.id)));
        h.insert(SEQ, "-1");
        assert_eq!(identity(&h), None);
        let mut h = for_update(&update);
        h.insert(KIND, "partial");
        assert_eq!(identity(&h), None);
        assert_eq!(identity(&HeaderMap::new()), None);
    }
}
