//! The commands on filters and frames, one file each: build, encode and
//! decode, inspect, query, delta and apply. The imports here are shared
//! by all of them (`use super::*`).

use crate::files::{for_each_key, progress, read_all, write_all, write_with};
use crate::kinds::{self, CodingArg, KindArg};
use crate::{CliResult, LimitArgs, UsageError};
use clap::Args;
use compressed_bloom::delta;
use compressed_bloom::format::stream;
use compressed_bloom::math::log2_binomial;
use compressed_bloom::plan::kinds as plan_kinds;
use compressed_bloom::plan::receiver::{self, PlanKind, Target};
use compressed_bloom::plan::Constraints;
use compressed_bloom::AnyFilter;
use compressed_bloom::{BloomFilter, Coding, FilterParams, FilterType, KeyHash, Kind};
use serde_json::json;
use std::path::PathBuf;

mod build;
mod changes;
mod codec;
mod inspect;
mod query;

pub(crate) use build::*;
pub(crate) use changes::*;
pub(crate) use codec::*;
pub(crate) use inspect::*;
pub(crate) use query::*;
