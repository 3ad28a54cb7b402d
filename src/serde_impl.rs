//! `Serialize` and `Deserialize` for the filter types (feature `serde`),
//! **as wire frames**: a filter serialises to one byte string, the frame
//! its encoder writes, and deserialises through the frame decoder under
//! [`DecodeLimits::default`]. So postcard, CBOR or JSON users get the same
//! compact, versioned, checksummed bytes as everyone else, and a
//! deserialiser facing a stranger's input has every guarantee of the frame
//! decoder (limits before allocation, CRC, typed errors) instead of a
//! field-by-field struct that would trust whatever it is told.
//!
//! Formats without a byte-string type (JSON) carry the frame as an array
//! of numbers; both forms are accepted.

use crate::format::{Coding, DecodeLimits};
use crate::kind::AnyFilter;
use crate::kind::{decode_as, Kind};
use crate::prelude::*;
use core::fmt;
use core::marker::PhantomData;
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Largest number of bytes pre-allocated from a sequence's size hint (the
/// frame decoder checks the real length against the limits).
const MAX_PREALLOC: usize = 64 * 1024;

/// Collects a frame given as bytes or as a sequence of numbers.
struct FrameVisitor<T>(PhantomData<T>, fn(&[u8]) -> Result<T, crate::DecodeError>);

impl<'de, T> Visitor<'de> for FrameVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a compressed-bloom frame (bytes)")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<T, E> {
        (self.1)(v).map_err(E::custom)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<T, E> {
        self.visit_bytes(v)
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<T, E> {
        self.visit_bytes(&v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        let limit = DecodeLimits::default().max_frame_len;
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MAX_PREALLOC));
        while let Some(b) = seq.next_element::<u8>()? {
            if bytes.len() as u64 >= limit {
                return Err(de::Error::custom(format_args!(
                    "frame longer than the default limit of {limit} bytes"
                )));
            }
            bytes.push(b);
        }
        (self.1)(&bytes).map_err(de::Error::custom)
    }
}

/// Serialize and Deserialize for each kind, through its [`Kind`]
/// implementation: the frame of [`Coding::Auto`], and [`decode_as`] under
/// the default limits.
macro_rules! frame_serde {
    ($($ty:ty),* $(,)?) => {$(
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&Kind::encode_frame(self, Coding::Auto, None))
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                fn decode(b: &[u8]) -> Result<$ty, crate::DecodeError> {
                    decode_as(b, &DecodeLimits::default())
                }
                d.deserialize_bytes(FrameVisitor(PhantomData, decode))
            }
        }
    )*};
}

/// [`frame_serde!`] for every kind in the registry.
macro_rules! registry_serde {
    ($($(#[$doc:meta])* $variant:ident($module:ident::$ty:ident),)*) => {
        frame_serde!(AnyFilter, $(crate::kinds::$module::$ty,)*);
    };
}
crate::kinds::for_each_kind!(registry_serde);
