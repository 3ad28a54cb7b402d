//! One entry point for every kind: [`decode_any`] decodes a full frame into
//! whichever kind its header declares ([`AnyFilter`]), checked against the
//! caller's [`DecodeLimits`] (including the kinds it accepts), and
//! [`encode_any`] writes any kind back. Everything here is generated from
//! the registry of kinds (`kinds::for_each_kind!`): no kind is named.

use crate::prelude::*;
use super::Kind;
use crate::filter::FilterParams;
use crate::format::{checked_whole_frame, Coding, DecodeError, DecodeLimits, FilterKind, FrameHeader, UpdateId};
use crate::delta::{check_base, DeltaHeader};

/// [`AnyFilter`], its methods, its [`Kind`] implementation and the
/// conversions to and from each kind's type, from the registry's list.
macro_rules! any_filter {
    ($($(#[$doc:meta])* $variant:ident($module:ident::$ty:ident),)*) => {
        /// A decoded filter of any kind.
        #[derive(Clone, Debug, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum AnyFilter {
            $($(#[$doc])* $variant(crate::kinds::$module::$ty),)*
        }

        impl AnyFilter {
            /// The filter's kind (a Squid digest's frames are of the
            /// standard kind).
            pub fn kind(&self) -> FilterKind {
                match self {
                    $(AnyFilter::$variant(_) => <crate::kinds::$module::$ty as Kind>::KIND,)*
                }
            }

            /// Whether `key` may be in the set (no false negatives).
            pub fn contains(&self, key: &[u8]) -> bool {
                match self {
                    $(AnyFilter::$variant(f) => Kind::contains(f, key),)*
                }
            }

            /// The number of keys the sender declared.
            pub fn len(&self) -> u64 {
                match self {
                    $(AnyFilter::$variant(f) => Kind::len(f),)*
                }
            }

            /// Whether the sender declared no keys.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The filter's parameters, as [`Kind::params`] gives them.
            pub fn params(&self) -> &FilterParams {
                match self {
                    $(AnyFilter::$variant(f) => Kind::params(f),)*
                }
            }

            /// The number of one bits, as [`Kind::count_ones`] gives it.
            pub fn count_ones(&self) -> u64 {
                match self {
                    $(AnyFilter::$variant(f) => Kind::count_ones(f),)*
                }
            }
        }

        impl Kind for AnyFilter {
            const KIND: FilterKind = FilterKind::Standard;
            fn accepts(h: &FrameHeader) -> bool {
                h.kind.is_supported()
            }
            fn contains(&self, key: &[u8]) -> bool {
                AnyFilter::contains(self, key)
            }
            fn len(&self) -> u64 {
                AnyFilter::len(self)
            }
            fn params(&self) -> &FilterParams {
                AnyFilter::params(self)
            }
            fn count_ones(&self) -> u64 {
                AnyFilter::count_ones(self)
            }
            fn digest(&self) -> u64 {
                match self {
                    $(AnyFilter::$variant(f) => Kind::digest(f),)*
                }
            }
            fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
                match self {
                    $(AnyFilter::$variant(f) => Kind::encode_frame(f, coding, id),)*
                }
            }
            /// The payload goes to the first kind in the registry's order
            /// whose [`Kind::accepts`] takes the header.
            fn decode_frame(
                h: &FrameHeader,
                payload: &[u8],
                limits: &DecodeLimits,
            ) -> Result<Self, DecodeError> {
                $(
                    if <crate::kinds::$module::$ty as Kind>::accepts(h) {
                        return <crate::kinds::$module::$ty as Kind>::decode_frame(h, payload, limits).map(AnyFilter::$variant);
                    }
                )*
                Err(DecodeError::UnsupportedKind {
                    id: h.kind.id(),
                    name: Some(h.kind.name()),
                })
            }
            fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
                match (old, new) {
                    $((AnyFilter::$variant(a), AnyFilter::$variant(b)) => Kind::encode_delta(a, b, id),)*
                    _ => None,
                }
            }
            fn apply_delta(
                &mut self,
                held: u64,
                frame: &[u8],
                d: &DeltaHeader,
                limits: &DecodeLimits,
            ) -> Result<u64, DecodeError> {
                // The base is checked first, so a delta for another kind's
                // filter is refused for its digest before its kind is
                // looked at.
                check_base(d, held)?;
                match self {
                    $(AnyFilter::$variant(f) => Kind::apply_delta(f, held, frame, d, limits),)*
                }
            }
        }

        // Conversions between AnyFilter and each kind's type, so that a
        // caller holding one can ask for the other without matching on the
        // kind; the `TryFrom` error hands back the filter of the other kind.
        $(
            impl From<crate::kinds::$module::$ty> for AnyFilter {
                fn from(f: crate::kinds::$module::$ty) -> Self {
                    AnyFilter::$variant(f)
                }
            }

            impl TryFrom<AnyFilter> for crate::kinds::$module::$ty {
                type Error = AnyFilter;

                fn try_from(any: AnyFilter) -> Result<Self, AnyFilter> {
                    match any {
                        AnyFilter::$variant(f) => Ok(f),
                        other => Err(other),
                    }
                }
            }
        )*
    };
}

crate::kinds::for_each_kind!(any_filter);

/// Decodes exactly one full frame of any kind occupying all of `data`.
///
/// # Errors
/// Any [`DecodeError`]; [`DecodeError::UnsupportedKind`] for a kind this
/// build or `limits.kinds` does not accept; [`DecodeError::WrongFrameType`]
/// for a delta.
pub fn decode_any(data: &[u8], limits: &DecodeLimits) -> Result<AnyFilter, DecodeError> {
    let (h, payload) = checked_whole_frame(data, limits)?;
    AnyFilter::decode_frame(&h, payload, limits)
}

/// Encodes a filter of any kind as its full frame of [`Coding::Auto`].
pub fn encode_any(f: &AnyFilter) -> Vec<u8> {
    Kind::encode_frame(f, Coding::Auto, None)
}
