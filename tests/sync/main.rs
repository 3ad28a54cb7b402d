//! Filters kept in step across a network: delta frames, the publisher and
//! the subscriber (docs/FORMAT.md section 5) for every kind, a summary-cache
//! exchange over TCP (feature `tokio`), and distribution over NATS
//! JetStream (feature `nats`).

#[path = "../common/mod.rs"]
mod common;

mod delta;
mod kinds;
mod nats;
mod nats_auth;
mod nats_cluster;
mod ordering;
mod signed;
mod summary_cache;
