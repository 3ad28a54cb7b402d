//! The standard kind's frames and deltas: [`Kind`] for [`BloomFilter`], whose
//! frame and delta codecs are the format's own (`format`, `delta`).

use crate::prelude::*;
use crate::delta::{self, DeltaHeader};
use crate::filter::BloomFilter;
use crate::format::{self, Coding, DecodeError, DecodeLimits, FilterKind, FrameHeader, UpdateId};
use crate::kind::{membership, Kind};

impl Kind for BloomFilter {
    const KIND: FilterKind = FilterKind::Standard;
    fn accepts(h: &FrameHeader) -> bool {
        // A Squid digest's frame holds a standard filter (its mask), as
        // `decode` reads it.
        h.kind == FilterKind::Standard
    }
    membership!(BloomFilter);
    fn count_ones(&self) -> u64 {
        BloomFilter::count_ones(self)
    }
    fn digest(&self) -> u64 {
        BloomFilter::digest(self)
    }
    fn encode_frame(&self, coding: Coding, id: Option<UpdateId>) -> Vec<u8> {
        format::encode_bits(self, FilterKind::Standard, id, None, coding)
    }
    fn decode_frame(
        h: &FrameHeader,
        payload: &[u8],
        _limits: &DecodeLimits,
    ) -> Result<Self, DecodeError> {
        format::decode_full(h, payload)
    }
    fn encode_delta(old: &Self, new: &Self, id: Option<UpdateId>) -> Option<Vec<u8>> {
        match id {
            Some(id) => delta::encode_delta_with_identity(old, new, id).ok(),
            None => delta::encode_delta(old, new).ok(),
        }
    }
    fn apply_delta(
        &mut self,
        held: u64,
        frame: &[u8],
        d: &DeltaHeader,
        _limits: &DecodeLimits,
    ) -> Result<u64, DecodeError> {
        delta::apply_checked(self, held, frame, d)
    }
}

