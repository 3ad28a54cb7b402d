//! A counting Bloom filter with 4-bit saturating counters (Fan, Cao, Almeida
//! and Broder, "Summary Cache"), so a publisher can delete keys. Its bit view
//! (counter > 0) is what travels.
//!
//! A key adds one to each of its *distinct* positions. A counter that reaches
//! 15 sticks there: its true count is unknown from then on, so removals leave
//! it set (a possible false positive later, never a false negative). Overflow
//! is rare: Summary Cache bounds the probability that any counter reaches 16
//! during insertion by 1.37e-15·m when k <= ln2·m/n.
//!
//! Removing a key that was never inserted is the caller's error, which
//! the filter cannot always see: if all of its counters are nonzero
//! (a false positive), [`CountingBloomFilter::remove`] decrements them,
//! and a key that was inserted and shares one of them can then read as
//! absent. Remove only keys you inserted.
//!
//! ## From a plan to the wire and back
//! Plan for 10,000 keys at f = 0.01, build, send as a frame, decode, and
//! publish to a subscriber:
//!
//! ```
//! use compressed_bloom::plan::{self, Constraints, Needs, Target};
//! use compressed_bloom::{decode_as, encode_any, AnyFilter, DecodeLimits, FilterKind};
//! use compressed_bloom::{Publisher, PublisherOptions, Subscriber};
//! let needs = Needs { deletion: true, ..Needs::STATIC };
//! let (choice, _) = plan::recommend(10_000, Target::Fpr(0.01), needs, &Constraints::default())?;
//! let filter = choice.build((0..10_000u32).map(|i| i.to_le_bytes()))?;
//! assert_eq!(filter.kind(), FilterKind::Counting);
//! let frame = encode_any(&filter);
//! let received: AnyFilter = decode_as(&frame, &DecodeLimits::default())?;
//! assert_eq!(received, filter);
//! let mut publisher = Publisher::new(filter, PublisherOptions::default());
//! let mut subscriber = Subscriber::<AnyFilter>::default();
//! subscriber.receive(&publisher.publish().frame)?;
//! assert!(subscriber.filter().is_some_and(|f| f.contains(&7u32.to_le_bytes())));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```


mod filter;
// The kind on the wire: its frames, its deltas and `Kind` (above the
// frame layer, which it uses).
mod kind;
internal_modules!(payload);

pub use filter::*;
// Each frame and delta function, for the crate's tests, tools and CLI;
// the API is the `Kind` trait and `decode_as`.
internal! {
    pub use kind::{encode_counting, encode_counting_raw, decode_counting, encode_delta_counting, apply_counting};
}
pub use payload::CountingError;
internal! {
    pub use payload::*;
}
