#![cfg(feature = "nats")]
//! The NATS layer at real sizes, against a three-node JetStream cluster
//! started by `tools/nats_cluster.sh` (default `max_payload`, 1 MiB):
//! frames of several megabytes in pieces, hostile pieces, and the faults
//! of a cluster (a server killed and restarted, the stream's leader killed,
//! a subscriber's server lost, the publisher restarted). Every subscriber
//! must end equal to the publisher and never hold a version the publisher
//! did not publish with that content.
//!
//! Without a `nats-server` binary these tests fail, as the single-server
//! ones do.

use compressed_bloom::nats::{pieces, Event, NatsConfig, NatsPublisher, NatsSubscriber};
use compressed_bloom::{
    BloomFilter, DecodeLimits, FilterParams, Kind, Publisher, PublisherOptions, Subscriber,
    UpdateId,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::time::timeout;

const STREAM: u64 = 11;
const WAIT: Duration = Duration::from_secs(90);

/// Three servers started by the script, stopped (by its recorded pids)
/// and removed on drop.
struct Cluster {
    dir: PathBuf,
    urls: Vec<String>,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/nats_cluster.sh")
}

impl Cluster {
    fn start() -> Cluster {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "cbloom-cluster-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(&dir)
            .output()
            .expect("bash runs tools/nats_cluster.sh");
        let mut c = Cluster { dir, urls: vec![] };
        assert!(
            out.status.success(),
            "tools/nats_cluster.sh start failed (the cluster tests need nats-server: \
             `bash tools/test-deps.sh` installs it): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last = stdout.lines().last().unwrap_or_default();
        c.urls = last.split(',').map(str::to_owned).collect();
        assert_eq!(c.urls.len(), 3, "last line: {last}");
        c
    }

    fn run(&self, what: &str, node: usize) {
        let out = Command::new("bash")
            .arg(script())
            .arg(what)
            .arg(&self.dir)
            .arg(node.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "nats_cluster.sh {what} {node}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// SIGKILLs server n`node`.
    fn kill(&self, node: usize) {
        self.run("kill", node);
    }

    fn restart(&self, node: usize) {
        self.run("restart", node);
    }

    /// A client that knows every server, trying `first` (1-based) first.
    async fn client(&self, first: usize) -> async_nats::Client {
        let mut urls = self.urls.clone();
        urls.rotate_left(first - 1);
        async_nats::ConnectOptions::new()
            .retain_servers_order()
            .retry_on_initial_connect()
            .connect(urls)
            .await
            .unwrap()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The script's own contract: three URLs, `stop` ends the servers.
#[test]
fn the_cluster_script_starts_three_servers_and_stops_them() {
    let c = Cluster::start();
    let pids: Vec<String> = (1..=3)
        .map(|i| std::fs::read_to_string(c.dir.join(format!("n{i}.pid"))).unwrap())
        .collect();
    for u in &c.urls {
        let port = u.rsplit(':').next().unwrap();
        assert!(std::net::TcpStream::connect(("127.0.0.1", port.parse().unwrap())).is_ok());
    }
    drop(c);
    for p in pids {
        let alive = std::path::Path::new(&format!("/proc/{}", p.trim())).exists()
            && !std::fs::read_to_string(format!("/proc/{}/stat", p.trim()))
                .unwrap_or_default()
                .contains(") Z ");
        assert!(!alive, "server {p} still runs after stop");
    }
}

fn config(filter: &str) -> NatsConfig {
    let mut c = NatsConfig::new("test.cluster", filter).unwrap();
    c.replicas = 3;
    c.full_period = None;
    c.min_backoff = Duration::from_millis(50);
    c.max_backoff = Duration::from_millis(500);
    c.probe_interval = Duration::from_millis(500);
    c.publish_attempts = 40;
    c.request_timeout = Duration::from_secs(1);
    c
}

/// Random bits of density about 1/4 (two random bytes ANDed).
fn random_filter(m: u64, seed: u64) -> BloomFilter {
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let bytes: Vec<u8> = (0..m / 8)
        .flat_map(|_| {
            let w = next() & next();
            w.to_le_bytes()
        })
        .take((m / 8) as usize)
        .collect();
    BloomFilter::from_bytes(FilterParams::new(m, 1, 5), m / 5, &bytes).unwrap()
}

/// Every version the publisher published, with its content's digest.
type Published = Arc<Mutex<HashMap<UpdateId, u64>>>;

/// A subscriber in a task; after every step it checks that it holds a
/// version the publisher published, with that content.
struct Member {
    state: watch::Receiver<compressed_bloom::nats::Snapshot>,
    events: Arc<Mutex<Vec<Event>>>,
    violations: Arc<Mutex<Vec<String>>>,
    peak: Arc<Mutex<usize>>,
    client: async_nats::Client,
    task: tokio::task::JoinHandle<()>,
}

fn member(client: async_nats::Client, cfg: &NatsConfig, published: &Published) -> Member {
    let mut sub = NatsSubscriber::new(
        client.clone(),
        cfg.clone(),
        Subscriber::following(STREAM, DecodeLimits::default()),
    );
    let state = sub.watch();
    let events = Arc::new(Mutex::new(Vec::new()));
    let violations = Arc::new(Mutex::new(Vec::new()));
    let peak = Arc::new(Mutex::new(0));
    let (e, v, pk, published) = (
        events.clone(),
        violations.clone(),
        peak.clone(),
        published.clone(),
    );
    let task = tokio::spawn(async move {
        loop {
            let ev = sub.next_event().await;
            if matches!(ev, Event::Applied { .. } | Event::Resynchronised { .. }) {
                let held = (sub.version(), sub.filter().map(Kind::digest));
                let ok = match held {
                    (Some(id), Some(d)) => published.lock().unwrap().get(&id) == Some(&d),
                    _ => false,
                };
                if !ok {
                    v.lock().unwrap().push(format!("{held:?} after {ev:?}"));
                }
            }
            *pk.lock().unwrap() = sub.pieces_peak_bytes();
            e.lock().unwrap().push(ev);
        }
    });
    Member {
        state,
        events,
        violations,
        peak,
        client,
        task,
    }
}

impl Member {
    /// Waits until the member holds `v`; returns how long that took.
    async fn reaches(&mut self, v: UpdateId, expected: &BloomFilter) -> Duration {
        let t = Instant::now();
        let ok = matches!(
            timeout(WAIT, self.state.wait_for(|s| s.version == Some(v))).await,
            Ok(Ok(_))
        );
        if !ok {
            let ev = self.events.lock().unwrap().clone();
            let tail = &ev[ev.len().saturating_sub(20)..];
            panic!("did not reach {v:?}; last events: {tail:#?}");
        }
        assert_eq!(self.state.borrow().filter.as_deref(), Some(expected));
        let violations = self.violations.lock().unwrap().clone();
        assert!(violations.is_empty(), "{violations:#?}");
        t.elapsed()
    }

    fn refused(&self) -> Vec<Event> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches!(e, Event::PiecesRefused { .. }))
            .cloned()
            .collect()
    }
}

/// The publisher side of a test: publishes and records every version.
struct Source {
    np: NatsPublisher,
    p: Publisher<BloomFilter>,
    published: Published,
}

impl Source {
    async fn new(client: async_nats::Client, cfg: &NatsConfig, m: u64, epoch: u64) -> Source {
        let p = Publisher::new(
            random_filter(m, epoch),
            PublisherOptions {
                full_every: 6,
                stream: STREAM,
                epoch: Some(epoch),
                ..PublisherOptions::default()
            },
        );
        Source {
            np: NatsPublisher::new(client, cfg.clone()).await.unwrap(),
            p,
            published: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// One update after inserting `keys` keys (round `r`).
    async fn update(&mut self, r: u64, keys: u64) -> UpdateId {
        let f = self.p.filter_mut().unwrap();
        for i in 0..keys {
            f.insert(&(r << 32 | i).to_le_bytes());
        }
        let id = self.p.next_id();
        let digest = self.p.current().digest();
        self.published.lock().unwrap().insert(id, digest);
        let u = self.np.publish(&mut self.p).await.unwrap();
        assert_eq!(u.id, id);
        id
    }
}

async fn bounded(body: impl std::future::Future<Output = ()>) {
    timeout(Duration::from_secs(400), body)
        .await
        .expect("test timed out");
}

/// Frames of 5 MB and more, and deltas above `max_payload`, reach every
/// subscriber of a three-node cluster with R3 through the default 1 MiB
/// `max_payload`, and a late joiner resumes exactly after the full frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_of_megabytes_travel_in_pieces_through_the_cluster() {
    let cluster = Cluster::start();
    bounded(async {
        let cfg = config("large");
        let c = cluster.client(1).await;
        assert_eq!(c.max_payload(), 1 << 20, "the default max_payload");
        // 7 MB of bits at density 1/4: a full frame of about 5.7 MB.
        let mut src = Source::new(c, &cfg, 56_000_000, 100).await;
        let mut subs = Vec::new();
        for i in 1..=2 {
            subs.push(member(cluster.client(i).await, &cfg, &src.published));
        }
        let mut last = None;
        for r in 0..8 {
            // Round 3 changes many bits: a delta of over 1 MiB.
            let keys = if r == 3 { 2_000_000 } else { 20_000 };
            last = Some(src.update(r, keys).await);
            if r == 4 {
                subs.push(member(cluster.client(3).await, &cfg, &src.published));
            }
        }
        let last = last.unwrap();
        let expected = src.p.current();
        for s in &mut subs {
            s.reaches(last, &expected).await;
            assert!(s.refused().is_empty(), "{:#?}", s.refused());
        }
        let late = subs[2].events.lock().unwrap().clone();
        assert!(
            !late.iter().any(|e| matches!(
                e,
                Event::Skipped {
                    reason: compressed_bloom::SyncError::NeedFull { .. },
                    ..
                }
            )),
            "the late joiner saw a gap: {late:#?}"
        );
        let stats = src.np.stats();
        assert!(stats.frame_bytes_max >= 5_000_000, "{stats:?}");
        assert!(stats.pieces_max >= 7, "{stats:?}");
        let peak = *subs[0].peak.lock().unwrap();
        assert!(peak as u64 <= stats.frame_bytes_max, "{peak} {stats:?}");
        eprintln!(
            "largest frame {} bytes in {} pieces; {} messages for {} updates; \
             a subscriber held at most {peak} bytes of pieces",
            stats.frame_bytes_max, stats.pieces_max, stats.messages, stats.updates
        );
        for s in subs {
            s.task.abort();
        }
    })
    .await;
}

/// Hostile pieces on the update subject are refused, the buffer held
/// never exceeds the declared length, and the state is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pieces_are_refused_and_the_state_is_kept() {
    let cluster = Cluster::start();
    bounded(async {
        let mut cfg = config("hostile-pieces");
        cfg.piece_bytes = Some(100_000);
        cfg.max_frame_bytes = 4_000_000;
        let c = cluster.client(1).await;
        let mut src = Source::new(c.clone(), &cfg, 4_000_000, 100).await;
        let mut sub = member(cluster.client(2).await, &cfg, &src.published);
        let v = src.update(0, 1_000).await;
        let held = src.p.current();
        sub.reaches(v, &held).await;

        // The real next update, cut by hand into 100 kB pieces.
        let mut probe = src.p.clone();
        probe.filter_mut().unwrap().insert(b"next");
        let frame = probe.full_frame().unwrap();
        let f = &frame.frame;
        assert!(f.len() > 300_000, "{}", f.len());
        let parts = pieces::cut(f, 100_000);
        let n = parts.len();
        let piece = |i: usize| {
            let mut h = compressed_bloom::nats::headers::for_update(&frame);
            pieces::piece_headers(&mut h, f, i, n, (i > 0).then_some(1));
            (h, bytes::Bytes::copy_from_slice(parts[i]))
        };
        let mut flipped = piece(1);
        let mut b = flipped.1.to_vec();
        b[10] ^= 1;
        flipped.1 = b.into();
        let mut huge = piece(0);
        huge.0.insert(pieces::FRAME_BYTES, "3000000000");
        let mut long = piece(n - 1);
        long.1 = bytes::Bytes::from(vec![0u8; 100_000]);
        // Each case, and how many refusals it makes.
        type Msgs = Vec<(async_nats::HeaderMap, bytes::Bytes)>;
        let cases: Vec<(&str, Msgs, usize)> = vec![
            ("missing", vec![piece(0), piece(2)], 1),
            ("duplicated", vec![piece(0), piece(0)], 1),
            // Piece 1 without piece 0; then piece 2 without piece 1.
            ("reordered", vec![piece(1), piece(0), piece(2)], 2),
            // A whole (garbage) message cuts the frame short.
            (
                "interleaved",
                vec![piece(0), (Default::default(), b"x".to_vec().into())],
                1,
            ),
            ("oversized", vec![huge], 1),
            (
                "longer than declared",
                (0..n - 1).map(piece).chain([long]).collect(),
                1,
            ),
            (
                "crc",
                [piece(0), flipped]
                    .into_iter()
                    .chain((2..n).map(piece))
                    .collect(),
                1,
            ),
        ];
        let js = async_nats::jetstream::new(c.clone());
        for (what, msgs, refusals) in cases {
            let before = sub.refused().len();
            for (h, b) in msgs {
                js.publish_with_headers(cfg.update_subject(), h, b)
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
            let t = Instant::now();
            while sub.refused().len() < before + refusals {
                assert!(t.elapsed() < WAIT, "{what}: not refused");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let snap = sub.state.borrow().clone();
            assert_eq!(snap.version, Some(v), "{what}");
            assert_eq!(snap.filter.as_deref(), Some(&held), "{what}");
            let refused = sub.refused();
            for e in &refused[before..] {
                let Event::PiecesRefused {
                    held_bytes, reason, ..
                } = e
                else {
                    unreachable!()
                };
                assert!(*held_bytes <= f.len(), "{what}: {held_bytes}");
                eprintln!("{what}: refused holding {held_bytes} bytes: {reason}");
            }
        }
        assert!(*sub.peak.lock().unwrap() <= f.len());
        // The stream goes on.
        let last = src.update(1, 1_000).await;
        sub.reaches(last, &src.p.current()).await;
        sub.task.abort();
    })
    .await;
}

/// `count` updates from round `r` on.
async fn round(src: &mut Source, r: &mut u64, count: u64) -> UpdateId {
    let mut last = None;
    for _ in 0..count {
        last = Some(src.update(*r, 5_000).await);
        *r += 1;
    }
    last.unwrap()
}

/// Waits until `c` is connected to a server.
async fn connected_server(c: &async_nats::Client) -> String {
    let t = Instant::now();
    loop {
        if c.connection_state() == async_nats::connection::State::Connected {
            let name = c.server_info().server_name;
            if !name.is_empty() {
                return name;
            }
        }
        assert!(t.elapsed() < WAIT, "no connection");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The stream's leader, as server number (1, 2 or 3).
async fn stream_leader(c: &async_nats::Client, cfg: &NatsConfig) -> usize {
    let js = async_nats::jetstream::new(c.clone());
    let t = Instant::now();
    loop {
        if let Ok(mut s) = js.get_stream(cfg.stream_name()).await {
            if let Ok(info) = s.info().await {
                if let Some(l) = info.cluster.as_ref().and_then(|c| c.leader.clone()) {
                    return l.trim_start_matches('n').parse().unwrap();
                }
            }
        }
        assert!(t.elapsed() < WAIT, "no stream leader");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The faults of a cluster, one after the other, with frames above
/// `max_payload`: a server (the one a subscriber is connected to) killed
/// mid-run and restarted, the stream's leader killed, the publisher
/// restarted with a new epoch. Every subscriber ends equal each time and
/// never holds a state the publisher did not have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_loses_servers_and_the_publisher_and_every_subscriber_ends_equal() {
    let cluster = Cluster::start();
    bounded(async {
        let cfg = config("faults");
        // 2.5 MB of bits: full frames of about 2 MB, in 3 pieces.
        let m = 20_000_000;
        let mut src = Source::new(cluster.client(1).await, &cfg, m, 100).await;
        let mut subs = Vec::new();
        let mut on = Vec::new();
        for i in 1..=3 {
            let c = cluster.client(i).await;
            on.push(connected_server(&c).await);
            subs.push(member(c, &cfg, &src.published));
        }
        let admin = cluster.client(1).await;
        let mut r = 0;
        let v = round(&mut src, &mut r, 4).await;
        for s in &mut subs {
            s.reaches(v, &src.p.current()).await;
        }
        let mut resync_ms = Vec::new();

        // 1. A server that is not the stream's leader, with subscriber 2 on
        // it, killed mid-run: that subscriber reconnects to another.
        let leader = stream_leader(&admin, &cfg).await;
        let victim = (1..=3).find(|&i| i != leader && i != 1).unwrap();
        let sub_on_victim = on.iter().position(|s| *s == format!("n{victim}")).unwrap();
        let t = Instant::now();
        cluster.kill(victim);
        let v = round(&mut src, &mut r, 3).await;
        let expected = src.p.current();
        for s in &mut subs {
            s.reaches(v, &expected).await;
        }
        resync_ms.push(("server killed", t.elapsed().as_millis()));
        cluster.restart(victim);
        let v = round(&mut src, &mut r, 3).await;
        let expected = src.p.current();
        for s in &mut subs {
            s.reaches(v, &expected).await;
        }
        let now_on = connected_server(&subs[sub_on_victim].client).await;
        assert_ne!(now_on, format!("n{victim}"), "reconnected elsewhere");

        // 2. The stream's leader killed: a new one is elected.
        let leader = stream_leader(&admin, &cfg).await;
        let t = Instant::now();
        cluster.kill(leader);
        let v = round(&mut src, &mut r, 3).await;
        let published_ms = t.elapsed().as_millis();
        let expected = src.p.current();
        for s in &mut subs {
            s.reaches(v, &expected).await;
        }
        eprintln!("leader killed: published after {published_ms} ms");
        resync_ms.push(("leader killed", t.elapsed().as_millis()));
        let new_leader = stream_leader(&admin, &cfg).await;
        assert_ne!(new_leader, leader);
        cluster.restart(leader);

        // 3. The publisher restarted: a new epoch, from a full frame.
        let published = src.published.clone();
        drop(src);
        let t = Instant::now();
        let mut src = Source::new(cluster.client(2).await, &cfg, m, 200).await;
        src.published = published;
        let v = round(&mut src, &mut r, 3).await;
        let expected = src.p.current();
        for s in &mut subs {
            s.reaches(v, &expected).await;
            assert!(s.refused().is_empty(), "{:#?}", s.refused());
        }
        resync_ms.push(("publisher restarted", t.elapsed().as_millis()));
        eprintln!("resync times (ms, from the fault to every subscriber equal): {resync_ms:?}");
        for s in subs {
            s.task.abort();
        }
    })
    .await;
}
