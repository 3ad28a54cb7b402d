//! # compressed-bloom
//!
//! Bloom filters that travel: sized for the bytes they cost on the wire,
//! coded within a hair of the entropy bound, and framed in a versioned,
//! checksummed format that a stranger's bytes cannot crash.
//!
//! Following Mitzenmacher's *Compressed Bloom Filters*, a filter that is sent
//! should be tuned for its **compressed** size: for a fixed transmitted size
//! the usual k = ln2·m/n is the worst choice, and a larger, sparser array
//! with fewer hash positions gives a lower false-positive rate.
//!
//! The pipeline, one module per step:
//! keys → [`hash`] → [`filter`] → [`plan`] (choose m, k) → [`coder`]
//! (adaptive rANS) → [`format`](mod@format) (header, CRC-32C, limits) → bytes, and back.
//!
//! ## Plan, build, send, receive
//! ```
//! use compressed_bloom::{decode, encode, plan, BloomFilter, DecodeLimits, FilterParams};
//!
//! // 10,000 keys, a 10,000-byte frame budget (header and checksum included).
//! let p = plan::plan_for_size(10_000, 10_000, &plan::Constraints::default())?;
//! let mut filter = BloomFilter::new(FilterParams::new(p.m, p.k, 42))?;
//! for i in 0..10_000u32 {
//!     filter.insert(format!("key-{i}").as_bytes());
//! }
//! let frame = encode(&filter);
//! assert!(frame.len() as u64 <= p.bound_bytes);
//! let received = decode(&frame, &DecodeLimits::default())?; // limits and CRC first
//! assert_eq!(received, filter);
//! assert!(received.contains(b"key-7"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Feature flags
//! * `std` (default): threads for the coder, `std::io` streaming
//!   (`format::stream`), the planner (`plan`), the publisher and
//!   subscriber (`sync`), and hardware CRC-32C. Without it the core
//!   (filters, hashing, the coder, frames of every kind, deltas, Squid
//!   digests) builds as `#![no_std]` with `alloc`.
//! * `cli` (default): builds the `cbloom` binary (clap, indicatif,
//!   serde_json, plotters). Library users can set `default-features = false`.
//! * `simd` (default): type 4's byte decoder with AVX-512 on x86-64
//!   machines that have it (detected at run time; elsewhere the portable
//!   decoder runs), through `pulp`'s safe intrinsics: four or more large
//!   blocks at a time (1.2–1.3 GB/s on one thread on the 17.5 MB filter
//!   where the portable decoder gives 0.9, by `cargo bench --bench codec
//!   -- 'm=140000000.*static-decode/1'` with and without the feature;
//!   whole processes, which also read and write the bytes, differ less).
//!   Same results either way.
//! * `serde`: `Serialize`/`Deserialize` for every filter type, as wire
//!   frames (one byte string; decoded under the default limits).
//! * `tokio`: `tokio_codec::FrameCodec`, a `tokio_util` codec that
//!   frames a byte stream, enforcing the limits from each header before
//!   buffering the payload.
//! * `internals`: the crate's own modules (the coder, the wire primitives,
//!   the header parser, the kinds' payload codecs and work counters) for
//!   its CLI, tests, benches, fuzz targets and tools. **Unstable and
//!   outside semver**: not for library users; the CLI turns it on.
//! * `nats`: fleet distribution over NATS JetStream (`nats::NatsPublisher`,
//!   `nats::NatsSubscriber`) with the official `async-nats` client; brings
//!   `tokio`. Its tests start a `nats-server` of their own on loopback.

#![cfg_attr(not(feature = "std"), no_std)]
// The library's own (the other lints are in Cargo.toml's [lints]). Without
// `internals` the internal modules are private and their `pub` items
// unreachable by design.
#![cfg_attr(feature = "internals", warn(unreachable_pub))]
#![forbid(unsafe_code)] // Cargo.toml denies it everywhere; here no allow may lift it

/// Declares the modules that decode bytes from strangers, with the lints that
/// keep a panic out of them: no `unwrap`/`expect`/`panic!`, no indexing or
/// slicing that can fail, no unchecked arithmetic (outside `cfg(test)`; the
/// lint levels cover every submodule). docs/HARDENING.md lists the few
/// function-level `allow`s and the argument for each.
macro_rules! decoding_modules {
    (@lints $item:item) => {
        #[cfg_attr(
            not(test),
            deny(
                clippy::unwrap_used,
                clippy::expect_used,
                clippy::panic,
                clippy::indexing_slicing,
                clippy::arithmetic_side_effects
            )
        )]
        $item
    };
    ($($(#[$attr:meta])* $name:ident),*) => {$(
        decoding_modules!(@lints $(#[$attr])* pub mod $name;);
    )*};
}

/// Declares modules that only the crate's CLI, tests, benches, fuzz
/// targets and tools reach: public (and hidden from the docs) with the
/// `internals` feature, `pub(crate)` without it. `decoding:` puts them under
/// [`decoding_modules`]'s lints too.
macro_rules! internal_modules {
    (decoding: $($name:ident),*) => {$(
        decoding_modules!(@lints #[cfg(feature = "internals")] #[doc(hidden)] pub mod $name;);
        decoding_modules!(@lints #[cfg(not(feature = "internals"))] pub(crate) mod $name;);
    )*};
    ($($name:ident),*) => {$(
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        pub(crate) mod $name;
    )*};
}

/// Declares one item that only the crate's CLI, tests, benches, fuzz
/// targets and tools use: `pub` (and hidden from the docs) with the
/// `internals` feature, `pub(crate)` without it.
macro_rules! internal {
    ($(#[$m:meta])* pub $($item:tt)*) => {
        $(#[$m])*
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub $($item)*

        $(#[$m])*
        #[cfg(not(feature = "internals"))]
        #[allow(dead_code, unused_imports)]
        pub(crate) $($item)*
    };
}

extern crate alloc;

/// `Vec`, `String`, `format!` and friends from `alloc`, for the modules that
/// also build without `std` (with `std` these are the same items).
mod prelude {
    pub(crate) use alloc::boxed::Box;
    pub(crate) use alloc::format;
    pub(crate) use alloc::string::{String, ToString};
    pub(crate) use alloc::vec;
    pub(crate) use alloc::vec::Vec;
}

decoding_modules!(delta, format, kind, kinds);
pub mod bitcoin;
internal_modules!(decoding: coder, wire);
pub mod filter;
pub mod hash;
#[cfg(feature = "std")]
internal_modules!(math);
#[cfg(feature = "nats")]
pub mod nats;
#[cfg(feature = "std")]
pub mod plan;
#[cfg(feature = "serde")]
mod serde_impl;
#[cfg(feature = "std")]
pub mod sync;
#[cfg(feature = "tokio")]
pub mod tokio_codec;

pub use filter::{BloomFilter, FilterError, FilterParams};
internal! {
    /// The format's ranges of m and k, for the crate's own tools.
    pub use filter::{MAX_K, MAX_M};
}
pub use format::{
    decode, decode_from_buf, encode, encode_into, encode_to_buf, encode_with, inspect,
    max_encoded_len, Coding, DecodeError, DecodeLimits, EncodeError, FilterKind, FilterType,
    FrameHeader, UpdateId,
};
pub use kinds::counting::CountingBloomFilter;
internal! {
    /// Encoders the crate's tests and tools pin frame types with.
    pub use format::{encode_as, encode_static, encode_with_identity};
}
/// The Ed25519 crate signed frames use (`SigningKey`, `VerifyingKey`), so
/// that a caller's keys are of the version this crate signs and verifies
/// with.
pub use ed25519_dalek;
pub use hash::{HashScheme, KeyHash};
pub use kind::{apply_delta, decode_any, decode_as, encode_any, AnyFilter, Kind};
#[cfg(feature = "std")]
pub use sync::{Publisher, PublisherOptions, Subscriber, SyncError, Update, UpdateKind};

/// The README's examples, compiled and run as doctests (they use the
/// planner and the publisher, which need `std`, as the README says).
#[cfg(all(doctest, feature = "std"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
