//! A summary-cache exchange over real sockets (Fan, Cao, Almeida and
//! Broder's Summary Cache, the system Mitzenmacher's paper was written
//! for): proxy nodes on 127.0.0.1, each with a changing cache of URLs
//! driven by a Zipf-like request stream with evictions, each broadcasting
//! its filter to the others over TCP with [`FrameCodec`]: a full compressed
//! frame first, then deltas or full frames as the [`Publisher`] decides.
//! Each node answers "which peer may have this URL" from what it received.
//!
//! Used by `examples/summary_cache/main.rs` (the full run, printed) and
//! `tests/sync/summary_cache.rs` (a small run, asserted).

// Shared by the example and the test, which each read a subset of the fields.
#![allow(dead_code)]

use compressed_bloom::plan::{self, Constraints};
use compressed_bloom::sync::{Publisher, Subscriber, SyncError};
use compressed_bloom::tokio_codec::FrameCodec;
use compressed_bloom::PublisherOptions;
use compressed_bloom::{BloomFilter, DecodeLimits, FilterParams};
use futures_util::{SinkExt, StreamExt};
use std::collections::{HashSet, VecDeque};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::{FramedRead, FramedWrite};

/// The run's shape.
#[derive(Clone, Debug)]
pub struct Config {
    /// Proxy nodes.
    pub nodes: usize,
    /// URLs each cache holds at most (FIFO eviction).
    pub capacity: usize,
    /// Distinct URLs requests are drawn from.
    pub universe: u64,
    /// Zipf exponent of the request stream.
    pub zipf: f64,
    /// Requests per node between updates.
    pub requests: usize,
    /// Update rounds.
    pub rounds: usize,
    /// Probe URLs per node and round for the false-hit rate.
    pub probes: usize,
    /// Frames lost on the way on purpose: (round, from, to).
    pub drop: Vec<(usize, usize, usize)>,
    /// A full frame at least every this many updates.
    pub full_every: u32,
}

/// One node's update as it went out to one peer.
#[derive(Clone, Debug)]
pub struct Sent {
    /// Round, sender, receiver.
    pub round: usize,
    /// Sender.
    pub from: usize,
    /// Receiver.
    pub to: usize,
    /// "full", "delta", "lost", or "delta+repair" (a gap repaired by a
    /// full frame).
    pub what: &'static str,
    /// Bytes this update put on the wire to this peer (frames and the
    /// one-byte replies).
    pub bytes: usize,
    /// Keys in the sender's cache.
    pub keys: usize,
}

/// What happened in a round.
#[derive(Clone, Debug)]
pub struct Round {
    /// Round number (0 is the first full frame).
    pub round: usize,
    /// Every transmission.
    pub sent: Vec<Sent>,
    /// Probes answered "peer p may have it" while p did not, over probes
    /// p did not have.
    pub false_hits: (u64, u64),
    /// The mean predicted false-positive rate of the held filters
    /// (fill^k).
    pub predicted: f64,
    /// Whether, after the round, every node's view of every peer equalled
    /// the peer's filter.
    pub views_match: bool,
}

/// Bytes a Squid digest of the same capacity at 5 bits per entry costs
/// (header and mask), which Squid sends whole at every update.
pub fn squid_digest_bytes(capacity: usize) -> usize {
    128 + (capacity * 5).div_ceil(8)
}

/// Bytes of the uncompressed filter with the optimal k = ln 2 · m/n for
/// the false-positive rate `f` at `n` keys: m = n·ln(1/f)/ln(2)^2 bits.
pub fn uncompressed_optimal_bytes(n: usize, f: f64) -> usize {
    let m = (n as f64 * (1.0 / f).ln() / (std::f64::consts::LN_2.powi(2))).ceil();
    (m / 8.0).ceil() as usize
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn url(id: u64) -> Vec<u8> {
    format!("http://www.site{}.example/obj/{id}", id % 97).into_bytes()
}

struct Node {
    cache: HashSet<u64>,
    order: VecDeque<u64>,
    publisher: Publisher,
    /// This node's view of each peer (None for itself).
    views: Vec<Option<Subscriber>>,
    /// Zipf CDF shift: each node has its own popular URLs, overlapping.
    shift: u64,
    rng: Rng,
}

/// A pair of connected halves for one direction (from → to).
struct Link {
    data_out: FramedWrite<OwnedWriteHalf, FrameCodec>,
    reply_in: OwnedReadHalf,
    data_in: FramedRead<OwnedReadHalf, FrameCodec>,
    reply_out: OwnedWriteHalf,
}

/// Runs the exchange and reports each round.
///
/// # Errors
/// Socket or planning errors.
pub async fn run(cfg: &Config) -> Result<(Vec<Round>, FilterParams), Box<dyn std::error::Error>> {
    // The filter is planned for the cache's size at the bytes a Squid
    // digest would cost, with k capped at 8 for lookup speed.
    let cons = Constraints {
        max_k: 8,
        ..Constraints::default()
    };
    let p = plan::plan_for_size(
        cfg.capacity as u64,
        squid_digest_bytes(cfg.capacity) as u64,
        &cons,
    )?;
    let params = FilterParams::new(p.m, p.k, 0x5ca1ab1e);
    // Expansion: an empty cache's first frame is tiny; the receiver knows
    // the sender's plan, so it allows the plan's own size.
    let limits = DecodeLimits {
        max_m: p.m,
        max_expansion: None,
        ..DecodeLimits::default()
    };
    let zipf_cdf: Vec<f64> = {
        let mut acc = 0.0;
        let mut v: Vec<f64> = (1..=cfg.universe)
            .map(|r| {
                acc += 1.0 / (r as f64).powf(cfg.zipf);
                acc
            })
            .collect();
        let total = acc;
        v.iter_mut().for_each(|x| *x /= total);
        v
    };
    let mut nodes: Vec<Node> = (0..cfg.nodes)
        .map(|i| -> Result<Node, Box<dyn std::error::Error>> {
            Ok(Node {
                cache: HashSet::new(),
                order: VecDeque::new(),
                publisher: Publisher::counting(
                    params,
                    PublisherOptions {
                        full_every: cfg.full_every,
                        stream: i as u64,
                        epoch: Some(1),
                        ..PublisherOptions::default()
                    },
                )?,
                views: (0..cfg.nodes)
                    .map(|j| (j != i).then(|| Subscriber::following(j as u64, limits)))
                    .collect(),
                shift: i as u64 * cfg.universe / (4 * cfg.nodes as u64),
                rng: Rng(0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1)),
            })
        })
        .collect::<Result<_, _>>()?;

    // One TCP connection per ordered pair, through each receiver's listener.
    let mut listeners = Vec::new();
    for _ in 0..cfg.nodes {
        listeners.push(TcpListener::bind("127.0.0.1:0").await?);
    }
    let mut links: Vec<Vec<Option<Link>>> = (0..cfg.nodes).map(|_| Vec::new()).collect();
    for (from, row) in links.iter_mut().enumerate() {
        for (to, listener) in listeners.iter().enumerate() {
            if from == to {
                row.push(None);
                continue;
            }
            let (client, accepted) = tokio::join!(
                TcpStream::connect(listener.local_addr()?),
                listener.accept()
            );
            let (client, (server, _)) = (client?, accepted?);
            client.set_nodelay(true)?;
            server.set_nodelay(true)?;
            let (c_read, c_write) = client.into_split();
            let (s_read, s_write) = server.into_split();
            row.push(Some(Link {
                data_out: FramedWrite::new(c_write, FrameCodec::new(limits)),
                reply_in: c_read,
                data_in: FramedRead::new(s_read, FrameCodec::new(limits)),
                reply_out: s_write,
            }));
        }
    }

    let mut rounds = Vec::new();
    for round in 0..cfg.rounds {
        // Requests: a hit stays; a miss is fetched and cached, evicting the
        // oldest entry when full.
        for node in &mut nodes {
            for _ in 0..cfg.requests {
                let u = node.rng.unit();
                let rank = zipf_cdf.partition_point(|&c| c < u) as u64;
                let id = (rank + node.shift) % cfg.universe;
                if node.cache.insert(id) {
                    node.order.push_back(id);
                    node.publisher.insert(&url(id));
                    if node.order.len() > cfg.capacity {
                        if let Some(old) = node.order.pop_front() {
                            node.cache.remove(&old);
                            node.publisher.remove(&url(old));
                        }
                    }
                }
            }
        }
        // Broadcast: each node publishes once; each peer replies one byte
        // per frame (0 taken, 1 "I lost something: send a full frame").
        let mut sent = Vec::new();
        for from in 0..cfg.nodes {
            let update = nodes[from].publisher.publish();
            // The repair frame, should a peer report a gap.
            let repair = nodes[from]
                .publisher
                .full_frame()
                .ok_or("nothing published")?;
            let keys = nodes[from].cache.len();
            for to in 0..cfg.nodes {
                let Some(link) = links[from][to].as_mut() else {
                    continue;
                };
                if cfg.drop.contains(&(round, from, to)) {
                    sent.push(Sent {
                        round,
                        from,
                        to,
                        what: "lost",
                        bytes: update.frame.len(),
                        keys,
                    });
                    continue;
                }
                let what = if update.kind == compressed_bloom::UpdateKind::Full {
                    "full"
                } else {
                    "delta"
                };
                link.data_out
                    .send(bytes::Bytes::from(update.frame.clone()))
                    .await?;
                let mut bytes = update.frame.len() + 1;
                let frame = link.data_in.next().await.ok_or("connection closed")??;
                let view = nodes[to].views[from].as_mut().ok_or("no view")?;
                let reply = match view.receive(&frame.bytes) {
                    Ok(_) => 0u8,
                    Err(SyncError::NeedFull { .. }) => 1,
                    Err(e) => {
                        return Err(format!("node {to} refused node {from}'s frame: {e}").into())
                    }
                };
                link.reply_out.write_u8(reply).await?;
                let mut what = what;
                if link.reply_in.read_u8().await? == 1 {
                    let full = &repair;
                    link.data_out
                        .send(bytes::Bytes::from(full.frame.clone()))
                        .await?;
                    let frame = link.data_in.next().await.ok_or("connection closed")??;
                    view.receive(&frame.bytes)?;
                    link.reply_out.write_u8(0).await?;
                    link.reply_in.read_u8().await?;
                    bytes += full.frame.len() + 1;
                    what = "delta+repair";
                }
                sent.push(Sent {
                    round,
                    from,
                    to,
                    what,
                    bytes,
                    keys,
                });
            }
        }
        // Every view against the sender's filter, and false hits on probes.
        let truth: Vec<BloomFilter> = nodes.iter().map(|n| n.publisher.current()).collect();
        let mut views_match = true;
        let (mut false_hits, mut negatives) = (0u64, 0u64);
        let mut predicted = (0.0, 0usize);
        let mut probe_rng = Rng(0xD1B5_4A32_D192_ED03 ^ round as u64);
        for i in 0..cfg.nodes {
            for j in 0..cfg.nodes {
                let Some(view) = nodes[i].views[j].as_ref() else {
                    continue;
                };
                let lost_now = cfg.drop.contains(&(round, j, i));
                let held = view.filter();
                if !lost_now && held != Some(&truth[j]) {
                    views_match = false;
                }
                let Some(held) = held else { continue };
                predicted.0 += held.fill_ratio().powi(held.k() as i32);
                predicted.1 += 1;
                for _ in 0..cfg.probes {
                    let id = probe_rng.next() % cfg.universe;
                    if nodes[j].cache.contains(&id) {
                        continue;
                    }
                    negatives += 1;
                    false_hits += u64::from(held.contains(&url(id)));
                }
            }
        }
        rounds.push(Round {
            round,
            sent,
            false_hits: (false_hits, negatives),
            predicted: predicted.0 / predicted.1.max(1) as f64,
            views_match,
        });
    }
    Ok((rounds, params))
}
