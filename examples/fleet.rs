//! One publisher and a fleet of subscribers over a NATS JetStream server
//! that you started (`nats-server -js`): how many bytes the updates cost
//! against a full frame each time, how fast they go out, how long a late
//! joiner takes to catch up, and whether every subscriber ends with the
//! publisher's filter.
//!
//! ```text
//! nats-server -js -a 127.0.0.1 -p 4222 -sd /tmp/nats-store &
//! cargo run --release --features nats --example fleet -- \
//!     --server nats://127.0.0.1:4222 --subscribers 20 --updates 50 --churn 0.01
//! ```
//!
//! The publisher holds `--keys` keys (10^5 by default) in the filter
//! `cbloom build --fpr F` plans for them (a 1% false-positive rate by
//! default): the planner weighs the two kinds whose updates travel as
//! deltas, standard and sparse, and picks the one with the least memory
//! at the receiver among those whose frame is within 3% of the smallest.
//! For 10^5 keys at 1% that is a standard filter; for 10^7 keys at
//! f = 10^-4 a sparse one (k = 1, m ≈ 10^11, an 18.5 MB frame, 19.4 MB
//! in memory), where the standard filter with the same frame holds
//! 249 MB of bits. `--kind standard` or `--kind sparse` plans that kind
//! alone. Each update replaces the fraction `--churn` of the keys: a
//! standard filter is backed by counts; a sparse one is rebuilt from the
//! sorted positions of the keys held, into which the changed keys'
//! positions are merged (time linear in the keys; only the changed
//! keys' positions are sorted). One
//! subscriber joins after half of the updates; one is stopped for a fifth
//! of the updates and then restarted without its state. Each subscriber
//! has a connection of its own. The last line of output is one JSON
//! object, with the kind, m, k and `filter_held_bytes`, what one copy of
//! the filter holds in memory (m/8 for a standard filter, the positions'
//! list for a sparse one; `uncompressed_filter_bytes` stays m/8).
//!
//! At scale, against the three-node cluster of `tools/nats_cluster.sh`
//! (frames above the servers' 1 MiB `max_payload` travel in pieces; the
//! stream has three replicas when several servers are given), with the
//! stream's leader SIGKILLed after update 10 and the subscribers in 10
//! worker processes (the planner's sparse filter: about 60 MB per
//! subscriber at its peak, where `--kind standard` holds its 249 MB of
//! bits twice):
//!
//! ```text
//! urls=$(bash tools/nats_cluster.sh start /tmp/cbloom-cluster | tail -1)
//! cargo run --release --features nats --example fleet -- --cluster "$urls" \
//!     --cluster-dir /tmp/cbloom-cluster --kill-server-at 10 --processes 10 \
//!     --keys 10000000 --fpr 0.0001 --subscribers 100 --updates 20 --churn 0.001
//! bash tools/nats_cluster.sh stop /tmp/cbloom-cluster
//! ```
//!
//! Subscribers connect to the servers in turn, each knowing all of them,
//! so that the killed server's subscribers reconnect to another. The
//! first update is the full frame; the publisher sends the next once
//! every subscriber holds it (`warm_up_ms`, from its store; that wait is
//! kept out of the updates per second), so that the faults strike a
//! running fleet rather than one still starting. A resync
//! is timed from the fault (the kill, the restart of the stopped
//! subscriber) until every subscriber concerned holds the first version
//! published after it. The late joiner joins after half of the updates,
//! once no resync is open (not in the middle of the kill's), and its
//! catch-up is timed from its connection to holding the version
//! published when it joined.
//!
//! `--processes P` runs the subscribers but two (the one stopped and
//! restarted, and the late joiner) in P worker processes: this program
//! again, with the hidden `--subscriber-worker FIRST:COUNT`, which reports
//! each version its subscribers take, and at the end their digests, its
//! resident memory (VmRSS), its peak (VmHWM) and its CPU time, as lines
//! on its standard output. The workers plan the same filter from the same
//! flags, so their digests compare with the publisher's.
//! `subscriber_rss_bytes` and `subscriber_peak_rss_bytes` are then the
//! workers' memory and the sum of their peaks divided among their
//! subscribers; without `--processes` they are this process's growth (and
//! peak growth, with the publisher's) divided among the subscribers it
//! runs. `servers_disk_bytes` is each server's store at the end, as `du`
//! counts it.
//!
//! CPU times come from /proc (Linux; clock ticks of 10 ms): the
//! publisher's is its thread's during the updates (it runs on a runtime of
//! its own, with its connection), the subscribers' is the rest of this
//! process during the run plus the workers'. The full frame encoded after
//! each update to compare the bytes sent with full frames each time is
//! kept out of the publisher's CPU time and out of the updates per
//! second; `publisher_thread_cpu_s` is all of the publisher thread's,
//! with the first build of the filter and those full frames. The stream
//! `CBLOOM_cbloom-example_fleet` is deleted at the start so that each run
//! measures from an empty stream. `FLEET_TRACE=1` prints the publisher's
//! and the subscribers' steps with their times on standard error.

use compressed_bloom::kinds::sparse::SparseFilter;
use compressed_bloom::nats::{Event, NatsConfig, NatsPublisher, NatsSubscriber, SharedKind};
use compressed_bloom::PublisherOptions;
use compressed_bloom::{
    BloomFilter, Coding, DecodeLimits, FilterKind, FilterParams, Publisher, Subscriber, UpdateId,
};
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The command line.
#[derive(Debug, PartialEq)]
struct Args {
    server: String,
    subscribers: usize,
    updates: u64,
    churn: f64,
    keys: u64,
    fpr: f64,
    full_period_ms: u64,
    cluster: Option<String>,
    cluster_dir: Option<String>,
    kill_server_at: Option<u64>,
    /// Worker processes for the subscribers (0: all in this process).
    processes: usize,
    /// In a worker process: the first subscriber's number and how many.
    worker: Option<(usize, usize)>,
    /// The kind asked for (`None`: the planner's pick).
    kind: Option<FilterKind>,
}

impl Args {
    /// The servers to connect to.
    fn urls(&self) -> Vec<String> {
        self.cluster
            .as_deref()
            .unwrap_or(&self.server)
            .split(',')
            .map(str::to_owned)
            .collect()
    }
}

/// A client knowing every server, trying the `i`-th (modulo) first.
async fn connect(args: &Args, i: usize) -> async_nats::Client {
    let mut urls = args.urls();
    let n = urls.len();
    urls.rotate_left(i % n);
    async_nats::ConnectOptions::new()
        .retain_servers_order()
        .connect(urls)
        .await
        .unwrap_or_else(|e| {
            eprintln!("cannot connect to {:?}: {e}", args.urls());
            std::process::exit(1)
        })
}

const USAGE: &str = "usage: fleet [--server URL] [--subscribers N] [--updates U] [--churn C] \
     [--keys K] [--fpr F] [--full-period-ms MS] [--cluster URL,URL,URL] \
     [--cluster-dir DIR --kill-server-at U] [--processes P] [--kind standard|sparse|auto]\n\
     defaults: nats://127.0.0.1:4222, 20 subscribers, 50 updates, churn 0.01, \
     100000 keys, f = 0.01, a full frame copy every 60000 ms (the library's default), \
     subscribers in this process (--processes 0), the kind the planner picks (auto)\n\
     at least 2 subscribers (one is stopped and restarted, one joins late) \
     and 2 updates; churn in [0, 1]; at least 1 key";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Parsed {
    /// `--help` or `-h`: the usage, on standard output, status 0.
    Help,
    /// A run.
    Run(Args),
}

/// Parses the arguments (without the program's name); an error says which
/// flag or value is wrong.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Parsed, String> {
    let mut a = Args {
        server: "nats://127.0.0.1:4222".into(),
        subscribers: 20,
        updates: 50,
        churn: 0.01,
        keys: 100_000,
        fpr: 0.01,
        full_period_ms: 60_000,
        cluster: None,
        cluster_dir: None,
        kill_server_at: None,
        processes: 0,
        worker: None,
        kind: None,
    };
    fn num<T: std::str::FromStr>(flag: &str, v: &str, what: &str) -> Result<T, String> {
        v.parse()
            .map_err(|_| format!("{flag} takes {what}, not `{v}`"))
    }
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(Parsed::Help);
        }
        let known = [
            "--server",
            "--subscribers",
            "--updates",
            "--churn",
            "--keys",
            "--fpr",
            "--full-period-ms",
            "--cluster",
            "--cluster-dir",
            "--kill-server-at",
            "--processes",
            "--subscriber-worker",
            "--kind",
        ];
        if !known.contains(&flag.as_str()) {
            return Err(format!("unknown argument `{flag}`"));
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let whole = "a whole number";
        match flag.as_str() {
            "--server" => a.server = value,
            "--subscribers" => a.subscribers = num(&flag, &value, whole)?,
            "--updates" => a.updates = num(&flag, &value, whole)?,
            "--churn" => a.churn = num(&flag, &value, "a fraction such as 0.01")?,
            "--keys" => a.keys = num(&flag, &value, whole)?,
            "--fpr" => a.fpr = num(&flag, &value, "a rate such as 0.0001")?,
            "--cluster" => a.cluster = Some(value),
            "--cluster-dir" => a.cluster_dir = Some(value),
            "--kill-server-at" => a.kill_server_at = Some(num(&flag, &value, whole)?),
            "--processes" => a.processes = num(&flag, &value, whole)?,
            "--kind" => {
                a.kind = match value.as_str() {
                    "standard" => Some(FilterKind::Standard),
                    "sparse" => Some(FilterKind::Sparse),
                    "auto" => None,
                    _ => {
                        return Err(format!(
                            "--kind takes standard, sparse or auto, not `{value}`"
                        ))
                    }
                }
            }
            "--subscriber-worker" => {
                let (first, count) = value.split_once(':').ok_or_else(|| {
                    format!("--subscriber-worker takes FIRST:COUNT, not `{value}`")
                })?;
                a.worker = Some((
                    num(&flag, first, "FIRST:COUNT")?,
                    num(&flag, count, "FIRST:COUNT")?,
                ));
            }
            _ => a.full_period_ms = num(&flag, &value, whole)?,
        }
    }
    if a.subscribers < 2 {
        return Err(format!(
            "--subscribers {} is too few: the run needs at least 2 (one is stopped and \
             restarted, one joins late)",
            a.subscribers
        ));
    }
    if a.updates < 2 {
        return Err(format!(
            "--updates {} is too few: the run needs at least 2 (a subscriber joins after half)",
            a.updates
        ));
    }
    if !(0.0..=1.0).contains(&a.churn) {
        return Err(format!(
            "--churn {} is not a fraction of the keys in [0, 1]",
            a.churn
        ));
    }
    if !(a.fpr > 0.0 && a.fpr < 1.0) {
        return Err(format!("--fpr {} is not a rate in (0, 1)", a.fpr));
    }
    if a.kill_server_at.is_some() && a.cluster_dir.is_none() {
        return Err(
            "--kill-server-at needs --cluster-dir, the directory of tools/nats_cluster.sh".into(),
        );
    }
    if a.keys == 0 {
        return Err("--keys 0: the publisher needs at least 1 key".into());
    }
    if a.processes > a.subscribers - 2 {
        return Err(format!(
            "--processes {} is more than the {} subscribers that run in workers (all but the \
             restarted one and the late joiner)",
            a.processes,
            a.subscribers - 2
        ));
    }
    Ok(Parsed::Run(a))
}

/// The filter's kind and parameters: the plan `cbloom build --fpr F`
/// makes for `keys` keys (`--type standard` or `--type sparse` when
/// `kind` names one). Without a kind the planner weighs the two kinds the
/// fleet carries as deltas, standard and sparse, and takes the one with
/// the least receiver memory whose frame is within 3% of the smallest:
/// at 10^7 keys and f = 10^-4 a sparse filter of 20 MB rather than a
/// standard one of 249 MB for the same frame. For a standard filter that
/// is the smallest coded frame within 3% for the least memory, not the
/// uncompressed optimum (k = 7 at f = 0.01).
fn plan_params(
    keys: u64,
    fpr: f64,
    kind: Option<FilterKind>,
) -> Result<(FilterKind, FilterParams), String> {
    use compressed_bloom::plan::receiver::{default_plan, Target};
    let seed = 0x5eed;
    let cons = compressed_bloom::plan::Constraints {
        seed,
        ..Default::default()
    };
    let kinds = match kind {
        Some(k) => vec![k],
        None => vec![FilterKind::Standard, FilterKind::Sparse],
    };
    let d = default_plan(&kinds, keys, Target::Fpr(fpr), &cons)
        .map_err(|e| format!("no plan for {keys} keys at f = {fpr}: {e}"))?;
    Ok((d.kind, FilterParams::new(d.plan.m, d.plan.k, seed)))
}

/// A kind the fleet sends: how the publisher holds its keys and replaces
/// some of them between updates.
trait FleetKind: SharedKind {
    /// What the publisher keeps besides its [`Publisher`].
    type Keys: Send;

    /// A publisher of the filter of `keys`.
    fn start(params: FilterParams, keys: Range<u64>) -> (Publisher<Self>, Self::Keys);

    /// Takes the keys `removed` out and puts the keys `added` in.
    fn replace(
        p: &mut Publisher<Self>,
        keys: &mut Self::Keys,
        removed: Range<u64>,
        added: Range<u64>,
    );

    /// Bytes one copy of the filter holds in memory.
    fn held_bytes(&self) -> u64;
}

/// Only the first update must be full: afterwards the publisher sends the
/// smaller of delta and full, and the full-frame subject gets a copy
/// every period for late joiners.
fn publisher_options() -> PublisherOptions {
    PublisherOptions {
        full_every: u32::MAX,
        ..PublisherOptions::default()
    }
}

/// A standard filter, backed by counts so that keys can be removed.
impl FleetKind for BloomFilter {
    type Keys = ();

    fn start(params: FilterParams, keys: Range<u64>) -> (Publisher<Self>, ()) {
        let mut p = Publisher::counting(params, publisher_options()).unwrap();
        for i in keys {
            p.insert(&key(i));
        }
        (p, ())
    }

    fn replace(p: &mut Publisher<Self>, _: &mut (), removed: Range<u64>, added: Range<u64>) {
        for (old, new) in removed.zip(added) {
            p.remove(&key(old));
            p.insert(&key(new));
        }
    }

    fn held_bytes(&self) -> u64 {
        self.m().div_ceil(8)
    }
}

/// The positions of the sparse filter's keys, sorted, one for each key's
/// each hash (a position two keys share appears twice): a key's removal
/// takes out one copy, so that the filter is always that of the current
/// keys. An update merges the sorted changes in, in time linear in the
/// keys, rather than hashing and sorting all of them again.
struct SparseKeys {
    params: FilterParams,
    n: u64,
    positions: Vec<u64>,
}

impl SparseKeys {
    /// The sorted positions of `keys`.
    fn of(params: &FilterParams, keys: Range<u64>) -> Vec<u64> {
        let mut out: Vec<u64> = keys
            .flat_map(|i| {
                params.scheme.hash(&key(i), params.seed).positions_for(
                    params.scheme,
                    params.m,
                    params.k,
                )
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// The filter of the current keys.
    fn filter(&self) -> SparseFilter {
        SparseFilter::from_positions(self.params, self.n, self.positions.clone()).unwrap()
    }
}

impl FleetKind for SparseFilter {
    type Keys = SparseKeys;

    fn start(params: FilterParams, keys: Range<u64>) -> (Publisher<Self>, SparseKeys) {
        let held = SparseKeys {
            params,
            n: keys.end - keys.start,
            positions: SparseKeys::of(&params, keys),
        };
        (Publisher::new(held.filter(), publisher_options()), held)
    }

    fn replace(
        p: &mut Publisher<Self>,
        keys: &mut SparseKeys,
        removed: Range<u64>,
        added: Range<u64>,
    ) {
        let n = keys.n + (added.end - added.start) - (removed.end - removed.start);
        let gone = SparseKeys::of(&keys.params, removed);
        let new = SparseKeys::of(&keys.params, added);
        let old = std::mem::take(&mut keys.positions);
        let mut out = Vec::with_capacity(old.len() + new.len());
        let (mut g, mut a) = (gone.iter().peekable(), new.iter().peekable());
        for x in old {
            // One copy of x goes for each removed key's copy.
            if g.peek() == Some(&&x) {
                g.next();
                continue;
            }
            while let Some(&&y) = a.peek().filter(|&&&y| y <= x) {
                out.push(y);
                a.next();
            }
            out.push(x);
        }
        out.extend(a);
        assert!(g.next().is_none(), "a removed key was not held");
        keys.positions = out;
        keys.n = n;
        *p.filter_mut().unwrap() = keys.filter();
    }

    fn held_bytes(&self) -> u64 {
        self.heap_bytes() as u64
    }
}

/// CPU seconds (user + system) of the process or of the calling thread.
fn cpu_seconds(path: &str) -> f64 {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // Fields after the command name (which may hold spaces) in parentheses:
    // utime and stime are the 14th and 15th fields overall.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().sum::<u64>() as f64 / 100.0
}

/// This process's resident memory (`VmRSS`), or its peak (`VmHWM`),
/// from /proc (0 where unknown).
fn rss_bytes() -> u64 {
    status_bytes("VmRSS:")
}

/// The peak of this process's resident memory.
fn peak_rss_bytes() -> u64 {
    status_bytes("VmHWM:")
}

fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn key(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

/// What the publisher thread reports at the end.
struct Published<K> {
    last: UpdateId,
    filter: K,
    bytes_sent: u64,
    full_copies: u64,
    full_updates: u64,
    bytes_full_every_time: u64,
    seconds: f64,
    /// The updates' CPU time, without the full frames measured.
    cpu_seconds: f64,
    /// All of the publisher thread's CPU time: with the filter's first
    /// build and the full frames measured.
    thread_cpu_seconds: f64,
    frame_bytes_max: u64,
    pieces_max: u64,
}

/// SIGKILLs the stream's leader through `tools/nats_cluster.sh kill`;
/// returns its name.
async fn kill_leader(
    js: &async_nats::jetstream::Context,
    config: &NatsConfig,
    dir: &str,
) -> String {
    let leader = loop {
        if let Ok(mut s) = js.get_stream(config.stream_name()).await {
            if let Ok(info) = s.info().await {
                if let Some(l) = info.cluster.as_ref().and_then(|c| c.leader.clone()) {
                    break l;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/nats_cluster.sh");
    let node = leader.trim_start_matches('n');
    let ok = std::process::Command::new("bash")
        .args([script, "kill", dir, node])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("fleet: could not kill server {leader} of {dir}");
        std::process::exit(1);
    }
    leader
}

/// Publishes `args.updates` updates; `progress` carries the last update's
/// number and identity.
fn run_publisher<K: FleetKind>(
    args: &Args,
    config: NatsConfig,
    params: FilterParams,
    progress: watch::Sender<(u64, Option<UpdateId>)>,
    killed: watch::Sender<Option<(Instant, String)>>,
    mut warm: watch::Receiver<bool>,
) -> Published<K> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = connect(args, 0).await;
        let js = async_nats::jetstream::new(client.clone());
        let _ = js.delete_stream(config.stream_name()).await;
        let mut np = NatsPublisher::new(client, config.clone()).await.unwrap();
        let (mut p, mut keys) = K::start(params, 0..args.keys);
        let per_update = ((args.keys as f64 * args.churn).round() as u64).min(args.keys);
        let (mut oldest, mut next) = (0u64, args.keys);
        let mut full_every_time = 0u64;
        let (mut measure_cpu, mut measure_wall) = (0.0, Duration::ZERO);
        let cpu0 = cpu_seconds("/proc/thread-self/stat");
        let t0 = Instant::now();
        let mut last = None;
        for u in 0..args.updates {
            K::replace(
                &mut p,
                &mut keys,
                oldest..oldest + per_update,
                next..next + per_update,
            );
            oldest += per_update;
            next += per_update;
            trace(&format!("publisher: update {} built", u + 1));
            let update = np.publish(&mut p).await.unwrap();
            trace(&format!(
                "publisher: update {} stored ({} retries so far)",
                u + 1,
                np.stats().retries
            ));
            // What a full frame for this update would have cost (measured,
            // and its CPU time kept out of the publisher's).
            let (c, w) = (cpu_seconds("/proc/thread-self/stat"), Instant::now());
            let full = match p.filter() {
                Some(f) => f.encode_frame(Coding::Auto, Some(update.id)),
                None => p.current().encode_frame(Coding::Auto, Some(update.id)),
            };
            full_every_time += full.len() as u64;
            measure_cpu += cpu_seconds("/proc/thread-self/stat") - c;
            measure_wall += w.elapsed();
            last = Some(update.id);
            progress.send_replace((u + 1, last));
            if u == 0 {
                // The first frame is full: the updates start once every
                // subscriber holds it, so that what follows measures a
                // running fleet rather than its start.
                let w = Instant::now();
                let warm_up = warm.wait_for(|w| *w);
                let _ = tokio::time::timeout(Duration::from_secs(300), warm_up).await;
                measure_wall += w.elapsed();
            }
            if args.kill_server_at == Some(u + 1) {
                if let Some(dir) = &args.cluster_dir {
                    let name = kill_leader(&js, &config, dir).await;
                    trace(&format!("publisher: server {name} killed"));
                    killed.send_replace(Some((Instant::now(), name)));
                }
            }
        }
        let seconds = t0.elapsed().saturating_sub(measure_wall).as_secs_f64();
        let cpu = cpu_seconds("/proc/thread-self/stat") - cpu0 - measure_cpu;
        let stats = np.stats();
        Published {
            last: last.unwrap(),
            filter: p.current(),
            bytes_sent: stats.bytes(),
            full_copies: stats.full_copies,
            full_updates: stats.full_updates,
            bytes_full_every_time: full_every_time,
            seconds,
            cpu_seconds: cpu.max(0.0),
            thread_cpu_seconds: cpu_seconds("/proc/thread-self/stat"),
            frame_bytes_max: stats.frame_bytes_max,
            pieces_max: stats.pieces_max,
        }
    })
}

/// A resync being timed: what, since when, after how many updates its
/// target is published, the version to reach, and which member (`None`:
/// all but a stopped one).
type Resync = (String, Instant, u64, Option<UpdateId>, Option<usize>);

/// A subscriber in a task of its own, with a connection of its own.
struct Member<K> {
    state: watch::Receiver<compressed_bloom::nats::Snapshot<K>>,
    task: tokio::task::JoinHandle<()>,
}

async fn join<K: FleetKind>(args: &Args, i: usize, config: &NatsConfig) -> Member<K> {
    let client = connect(args, i).await;
    let mut sub = NatsSubscriber::new(
        client,
        config.clone(),
        Subscriber::<K>::new(DecodeLimits::default()),
    );
    let state = sub.watch();
    let late = i == args.subscribers - 1;
    let task = tokio::spawn(async move {
        loop {
            let ev = sub.next_event().await;
            if late || !matches!(ev, Event::Applied { .. }) {
                trace(&format!("subscriber {i}: {ev:?}"));
            }
            if let Event::Skipped { reason, .. } = ev {
                if !matches!(reason, compressed_bloom::SyncError::Stale { .. }) {
                    eprintln!("subscriber skipped a frame: {reason}");
                }
            }
        }
    });
    Member { state, task }
}

/// Waits (at most `limit`) until `m` holds version `v` or a later one.
/// How long the end of a run waits for subscribers that take no new
/// version: those still taking versions are waited for however long they
/// take. With 100 subscribers of a 10^7-key filter on two cores each
/// update takes the fleet tens of seconds of CPU, and the subscribers end
/// minutes after the publisher.
const QUIET: Duration = Duration::from_secs(120);

/// Waits until `m` holds version `v` or a later one, as long as it takes
/// a new version at least every `quiet`.
async fn reached<K>(m: &mut Member<K>, v: UpdateId, quiet: Duration) -> bool {
    loop {
        let version = m.state.borrow_and_update().version;
        if version.is_some_and(|h| h.version() >= v.version()) {
            return true;
        }
        if !matches!(
            tokio::time::timeout(quiet, m.state.changed()).await,
            Ok(Ok(()))
        ) {
            return false;
        }
    }
}

/// A number that changes whenever one of `members` takes a version.
fn held_mark<K>(members: &[Member<K>]) -> u64 {
    members
        .iter()
        .filter_map(|m| m.state.borrow().version)
        .fold(0u64, |a, v| a.wrapping_add(v.seq))
}

/// When the process started, for [`trace`].
static STARTED: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// With `FLEET_TRACE` set in the environment, `what` on standard error
/// after the seconds since the start: the publisher's stores, the late
/// joiner's events and every other subscriber's events but the updates it
/// applied (waits, resyncs, refusals), to see where a catch-up or a
/// resync spends its time.
fn trace(what: &str) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("FLEET_TRACE").is_some()) {
        let t = STARTED.get_or_init(Instant::now).elapsed().as_secs_f64();
        eprintln!("{t:9.3} {what}");
    }
}

/// The subjects and tunables, the same in every process of the run.
fn fleet_config(args: &Args) -> NatsConfig {
    let mut config = NatsConfig::new("cbloom-example", "fleet").unwrap();
    config.full_period = Some(Duration::from_millis(args.full_period_ms));
    if args.urls().len() > 1 {
        config.replicas = 3;
    }
    // Loopback servers answer in milliseconds: a 1 s request timeout and
    // probe notice a new stream leader within a second of its election.
    config.request_timeout = Duration::from_secs(1);
    config.max_backoff = Duration::from_secs(1);
    config.probe_interval = Duration::from_secs(1);
    config.publish_attempts = 60;
    config
}

/// `--subscriber-worker FIRST:COUNT`: runs subscribers FIRST.. in this
/// process and reports on standard output, one line each: `v I STREAM
/// EPOCH SEQ` whenever subscriber I holds a new version; after `end` on
/// standard input, `d I STREAM EPOCH SEQ DIGEST` for each (`-` where it
/// holds nothing), `rss BYTES`, `hwm BYTES` (its peak) and `cpu SECONDS` of this process, and
/// `done`.
fn run_worker<K: FleetKind>(args: &Args, config: &NatsConfig, first: usize, count: usize) {
    use compressed_bloom::Kind;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut members = Vec::new();
        for i in first..first + count {
            members.push(join::<K>(args, i, config).await);
        }
        for (j, m) in members.iter().enumerate() {
            let mut state = m.state.clone();
            let i = first + j;
            tokio::spawn(async move {
                loop {
                    let v = state.borrow_and_update().version;
                    if let Some(v) = v {
                        println!("v {i} {} {} {}", v.stream, v.epoch, v.seq);
                    }
                    if state.changed().await.is_err() {
                        break;
                    }
                }
            });
        }
        let _ = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
                if line.trim() == "end" {
                    break;
                }
                line.clear();
            }
        })
        .await;
        for (j, m) in members.iter().enumerate() {
            let s = m.state.borrow().clone();
            match (s.version, s.filter.as_deref().map(Kind::digest)) {
                (Some(v), Some(d)) => {
                    println!("d {} {} {} {} {d}", first + j, v.stream, v.epoch, v.seq)
                }
                _ => println!("d {} - - - -", first + j),
            }
        }
        println!("rss {}", rss_bytes());
        println!("hwm {}", peak_rss_bytes());
        println!("cpu {}", cpu_seconds("/proc/self/stat"));
        println!("done");
    });
    // The subscribers' tasks are not waited for.
    std::process::exit(0);
}

/// What the worker processes reported.
#[derive(Default)]
struct Remote {
    /// The version each remote subscriber holds, by its number.
    versions: std::collections::HashMap<usize, UpdateId>,
    /// At the end: each one's version and digest.
    finals: std::collections::HashMap<usize, Option<(UpdateId, u64)>>,
    rss_bytes: u64,
    peak_rss_bytes: u64,
    cpu_seconds: f64,
    done: usize,
}

/// The worker processes and what they report.
struct Workers {
    children: Vec<(std::process::Child, Option<std::process::ChildStdin>)>,
    state: Arc<std::sync::Mutex<Remote>>,
    /// The subscribers they run, by number.
    members: Vec<usize>,
}

impl Workers {
    /// Starts `args.processes` copies of this program, which share the
    /// subscribers 1 to `subscribers - 2` (0, restarted, and the late
    /// joiner stay here).
    fn start(args: &Args) -> Workers {
        let state = Arc::new(std::sync::Mutex::new(Remote::default()));
        let members: Vec<usize> = (1..args.subscribers - 1).collect();
        let mut children = Vec::new();
        let p = args.processes;
        let exe = std::env::current_exe().unwrap();
        let passed: Vec<String> = std::env::args().skip(1).collect();
        for w in 0..p {
            let (lo, hi) = (members.len() * w / p, members.len() * (w + 1) / p);
            let (first, count) = (members[0] + lo, hi - lo);
            let mut child = std::process::Command::new(&exe)
                .args(&passed)
                .arg("--subscriber-worker")
                .arg(format!("{first}:{count}"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| {
                    eprintln!("fleet: cannot start a worker process: {e}");
                    std::process::exit(1)
                });
            let stdout = child.stdout.take().unwrap();
            let stdin = child.stdin.take();
            let state = Arc::clone(&state);
            std::thread::spawn(move || read_worker(stdout, &state));
            children.push((child, stdin));
        }
        Workers {
            children,
            state,
            members,
        }
    }

    /// Whether every remote subscriber holds `v` or a later version.
    fn all_hold(&self, v: UpdateId) -> bool {
        let s = self.state.lock().unwrap();
        self.members.iter().all(|i| {
            s.versions
                .get(i)
                .is_some_and(|h| h.version() >= v.version())
        })
    }

    /// A number that changes whenever a remote subscriber takes a version.
    fn held_mark(&self) -> u64 {
        let s = self.state.lock().unwrap();
        s.versions.values().fold(0u64, |a, v| a.wrapping_add(v.seq))
    }

    /// Waits until every remote subscriber holds `v`, as long as one of
    /// them takes a new version at least every `quiet`, then asks each
    /// process for its final state and ends it.
    fn finish(&mut self, v: UpdateId, quiet: Duration) -> Remote {
        use std::io::Write;
        let (mut mark, mut moved) = (self.held_mark(), Instant::now());
        while !self.all_hold(v) && moved.elapsed() < quiet {
            std::thread::sleep(Duration::from_millis(20));
            let now = self.held_mark();
            if now != mark {
                (mark, moved) = (now, Instant::now());
            }
        }
        for (_, stdin) in &mut self.children {
            if let Some(mut s) = stdin.take() {
                let _ = writeln!(s, "end");
            }
        }
        for (child, _) in &mut self.children {
            let _ = child.wait();
        }
        std::mem::take(&mut *self.state.lock().unwrap())
    }
}

/// Reads one worker's report lines into `state`.
fn read_worker(stdout: std::process::ChildStdout, state: &std::sync::Mutex<Remote>) {
    use std::io::BufRead;
    for line in std::io::BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let f: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
        let id = |at: usize| {
            Some(UpdateId {
                stream: n(at)?,
                epoch: n(at + 1)?,
                seq: n(at + 2)?,
            })
        };
        let mut s = state.lock().unwrap();
        match f.first().copied() {
            Some("v") => {
                if let (Some(i), Some(v)) = (n(1), id(2)) {
                    s.versions.insert(i as usize, v);
                }
            }
            Some("d") => {
                if let Some(i) = n(1) {
                    let held = id(2).zip(n(5));
                    s.finals.insert(i as usize, held);
                }
            }
            Some("rss") => s.rss_bytes += n(1).unwrap_or(0),
            Some("hwm") => s.peak_rss_bytes += n(1).unwrap_or(0),
            Some("cpu") => {
                s.cpu_seconds += f.get(1).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0)
            }
            Some("done") => s.done += 1,
            _ => {}
        }
    }
}

/// The disk each server's store takes (as `du` counts it: allocated
/// blocks), by server directory `n1`, `n2`, `n3` of `dir`.
fn store_bytes(dir: &str) -> Vec<(String, u64)> {
    fn du(p: &std::path::Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::symlink_metadata(p) else {
            return 0;
        };
        let own = meta.blocks() * 512;
        if !meta.is_dir() {
            return own;
        }
        let children = std::fs::read_dir(p)
            .map(|rd| rd.flatten().map(|e| du(&e.path())).sum::<u64>())
            .unwrap_or(0);
        own + children
    }
    (1..=3)
        .map(|i| {
            let name = format!("n{i}");
            let bytes = du(&std::path::Path::new(dir).join(&name));
            (name, bytes)
        })
        .collect()
}

fn main() {
    STARTED.get_or_init(Instant::now);
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Parsed::Run(a)) => a,
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("fleet: error: {e}\n{USAGE}");
            std::process::exit(2)
        }
    };
    let (kind, params) = plan_params(args.keys, args.fpr, args.kind).unwrap_or_else(|e| {
        eprintln!("fleet: error: {e}");
        std::process::exit(2)
    });
    match kind {
        FilterKind::Sparse => run::<SparseFilter>(args, kind, params),
        _ => run::<BloomFilter>(args, kind, params),
    }
}

/// The run (or, with `--subscriber-worker`, a worker's part of it) with
/// filters of type `K`, of kind `kind`.
fn run<K: FleetKind>(args: Args, kind: FilterKind, params: FilterParams) {
    let (m, k) = (params.m, params.k);
    let config = fleet_config(&args);
    if let Some((first, count)) = args.worker {
        run_worker::<K>(&args, &config, first, count);
        return;
    }

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (progress_tx, mut progress) = watch::channel((0u64, None));
    let (killed_tx, killed) = watch::channel(None);
    let (warm_tx, warm_rx) = watch::channel(false);
    let rss_start = rss_bytes();
    let cpu_start = cpu_seconds("/proc/self/stat");
    let t0 = Instant::now();
    let args = Arc::new(args);
    let publisher = {
        let (args, config) = (Arc::clone(&args), config.clone());
        std::thread::spawn(move || {
            run_publisher::<K>(&args, config, params, progress_tx, killed_tx, warm_rx)
        })
    };

    let result = rt.block_on(async {
        let u = args.updates;
        // Everyone but the late joiner, from the start: here, or all but
        // the one restarted in worker processes.
        let workers = (args.processes > 0).then(|| Workers::start(&args));
        let here = if workers.is_some() {
            1
        } else {
            args.subscribers - 1
        };
        let mut members = Vec::new();
        for i in 0..here {
            members.push(join::<K>(&args, i, &config).await);
        }
        // Index 0 is stopped for a fifth of the updates, from a quarter on.
        let (stop_at, restart_at, join_at) = (u / 4, u / 4 + (u / 5).max(1), u / 2);
        let mut late: Option<(Member<K>, Instant, UpdateId)> = None;
        let mut catch_up_ms = None;
        let (mut stopped, mut restarted) = (false, false);
        // Open resyncs: what, since when, the version to reach, and which
        // members (None: all but a stopped one).
        let mut open: Vec<Resync> = Vec::new();
        let mut resyncs: Vec<(String, f64)> = Vec::new();
        let mut kill_seen = false;
        let mut killed_server = None;
        let (mut last_mark, mut moved) = (0u64, Instant::now());
        // From the first frame's store until every subscriber holds it.
        let (mut first_stored, mut warm_up_ms) = (None::<Instant>, None);
        loop {
            let (done, last) = *progress.borrow_and_update();
            if let (None, Some(v)) = (warm_up_ms, last) {
                let since = *first_stored.get_or_insert_with(Instant::now);
                let all = members.iter().all(|m| {
                    m.state
                        .borrow()
                        .version
                        .is_some_and(|h| h.version() >= v.version())
                }) && workers.as_ref().is_none_or(|w| w.all_hold(v));
                if all {
                    warm_up_ms = Some(since.elapsed().as_secs_f64() * 1e3);
                    warm_tx.send_replace(true);
                }
            }
            if !kill_seen {
                if let Some((at, name)) = killed.borrow().clone() {
                    kill_seen = true;
                    let after = args.kill_server_at.unwrap_or(0);
                    open.push((format!("server {name} killed"), at, after, None, None));
                    killed_server = Some(name);
                }
            }
            // A resync's target: the first version published after it.
            let stopped_now = stopped && !restarted;
            for (_, _, after, target, _) in &mut open {
                if target.is_none() && done > *after {
                    *target = last;
                }
            }
            open.retain(|(what, at, _, target, who)| {
                let Some(v) = target else { return true };
                let holds = |m: &Member<K>| {
                    m.state
                        .borrow()
                        .version
                        .is_some_and(|h| h.version() >= v.version())
                };
                let all = match who {
                    Some(i) => holds(&members[*i]),
                    None => {
                        members
                            .iter()
                            .enumerate()
                            .all(|(i, m)| (stopped_now && i == 0) || holds(m))
                            && workers.as_ref().is_none_or(|w| w.all_hold(*v))
                    }
                };
                if all {
                    resyncs.push((what.clone(), at.elapsed().as_secs_f64() * 1e3));
                }
                !all
            });
            if !stopped && done >= stop_at {
                members[0].task.abort();
                stopped = true;
            }
            if stopped && !restarted && done >= restart_at {
                members[0] = join::<K>(&args, 0, &config).await;
                restarted = true;
                let at = Instant::now();
                open.push(("restarted subscriber".into(), at, 0, last, Some(0)));
            }
            // The late joiner's catch-up is measured on a quiet stream:
            // not while a resync is open, nor just before the kill.
            let kill_next = !kill_seen && args.kill_server_at.is_some_and(|k| k <= done);
            if late.is_none() && done >= join_at && ((open.is_empty() && !kill_next) || done >= u) {
                if let Some(v) = last {
                    let i = args.subscribers - 1;
                    late = Some((join::<K>(&args, i, &config).await, Instant::now(), v));
                }
            }
            if let Some((m, started, v)) = late.as_mut() {
                if catch_up_ms.is_none()
                    && m.state
                        .borrow()
                        .version
                        .is_some_and(|h| h.version() >= v.version())
                {
                    catch_up_ms = Some(started.elapsed().as_secs_f64() * 1e3);
                }
            }
            // Open resyncs are waited for while the subscribers take
            // versions.
            let mark = held_mark(&members)
                .wrapping_add(workers.as_ref().map_or(0, Workers::held_mark))
                .wrapping_add(done);
            if mark != last_mark {
                (last_mark, moved) = (mark, Instant::now());
            }
            if done >= u && late.is_some() && (open.is_empty() || moved.elapsed() > QUIET) {
                break;
            }
            let _ = tokio::time::timeout(Duration::from_millis(20), progress.changed()).await;
        }
        let published = tokio::task::spawn_blocking(move || publisher.join().unwrap())
            .await
            .unwrap();
        let (mut late, started, v) = late.unwrap();
        if catch_up_ms.is_none() && reached(&mut late, v, QUIET).await {
            catch_up_ms = Some(started.elapsed().as_secs_f64() * 1e3);
        }
        members.push(late);
        let mut equal_each = Vec::new();
        for m in &mut members {
            let ok = reached(m, published.last, QUIET).await
                && m.state.borrow().filter.as_deref() == Some(&published.filter);
            equal_each.push(ok);
        }
        let remote = workers.map(|mut w| {
            let last = published.last;
            let r = w.finish(last, QUIET);
            let digest = compressed_bloom::Kind::digest(&published.filter);
            let equal = w
                .members
                .iter()
                .all(|i| r.finals.get(i) == Some(&Some((last, digest))));
            (r, equal, w.members.len())
        });
        let converged = t0.elapsed().as_secs_f64();
        for m in &members {
            m.task.abort();
        }
        (
            published,
            equal_each,
            catch_up_ms,
            converged,
            resyncs,
            killed_server,
            remote,
            warm_up_ms,
        )
    });
    let (published, equal_each, catch_up_ms, converged, resyncs, killed_server, remote, warm_up_ms) =
        result;
    let rss_end = rss_bytes();
    let resync_ms_max = resyncs
        .iter()
        .map(|r| r.1)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let cpu_total = cpu_seconds("/proc/self/stat") - cpu_start;
    let remote_cpu = remote.as_ref().map_or(0.0, |r| r.0.cpu_seconds);
    let subscribers_cpu = (cpu_total - published.thread_cpu_seconds).max(0.0) + remote_cpu;
    let n_subs = args.subscribers;
    let equal = equal_each.iter().all(|&e| e) && remote.as_ref().is_none_or(|r| r.1);
    let restarted_equal = equal_each[0];
    let late_joiner_equal = equal_each[equal_each.len() - 1];
    // Per subscriber: measured in the worker processes (each holds its
    // own), or this process's growth shared among those it ran.
    let subscriber_rss = match &remote {
        Some((r, _, count)) => r.rss_bytes / (*count).max(1) as u64,
        None => rss_end.saturating_sub(rss_start) / n_subs as u64,
    };
    let subscriber_peak_rss = match &remote {
        Some((r, _, count)) => r.peak_rss_bytes / (*count).max(1) as u64,
        None => peak_rss_bytes().saturating_sub(rss_start) / n_subs as u64,
    };
    let disk = args.cluster_dir.as_deref().map(store_bytes);
    // The filter as an m-bit array, and what one copy of it holds in
    // memory (the same for a standard filter; its positions for a sparse
    // one).
    let uncompressed = m.div_ceil(8);
    let held = published.filter.held_bytes();
    let per_update = published.bytes_sent as f64 / args.updates as f64;
    let ratio = published.bytes_sent as f64 / published.bytes_full_every_time as f64;
    let ups = args.updates as f64 / published.seconds;

    println!(
        "{n_subs} subscribers, {} updates of {} keys ({}% churn); {} filter m = {m} bits, k = {k} ({uncompressed} bytes uncompressed, {held} held)",
        args.updates,
        args.keys,
        args.churn * 100.0,
        kind.name()
    );
    println!(
        "published {:.1} updates/s; {} bytes in all, {per_update:.0} per update: {:.1}% of a full frame each time, {:.1}% of the uncompressed filter",
        ups,
        published.bytes_sent,
        ratio * 100.0,
        per_update / uncompressed as f64 * 100.0
    );
    println!(
        "{} full updates, {} full-frame copies; late joiner caught up in {} ms; all equal after {converged:.2} s",
        published.full_updates,
        published.full_copies,
        catch_up_ms.map_or("-".into(), |ms| format!("{ms:.0}"))
    );
    println!(
        "equal: all {equal}, late joiner {late_joiner_equal}, restarted {restarted_equal}; CPU: publisher {:.2} s, subscribers {:.2} s ({:.1} ms each)",
        published.cpu_seconds,
        subscribers_cpu,
        subscribers_cpu / n_subs as f64 * 1e3
    );
    println!(
        "{}",
        serde_json::json!({
            "subscribers": n_subs,
            "updates": args.updates,
            "keys": args.keys,
            "churn": args.churn,
            "kind": kind.name(),
            "m": m,
            "k": k,
            "filter_held_bytes": held,
            "equal": equal,
            "late_joiner_equal": late_joiner_equal,
            "restarted_equal": restarted_equal,
            "bytes_sent": published.bytes_sent,
            "bytes_full_every_time": published.bytes_full_every_time,
            "bytes_sent_ratio": (ratio * 1e4).round() / 1e4,
            "bytes_per_update": per_update.round(),
            "uncompressed_filter_bytes": uncompressed,
            "full_updates": published.full_updates,
            "full_copies": published.full_copies,
            "updates_per_s": (ups * 10.0).round() / 10.0,
            "late_joiner_catch_up_ms": catch_up_ms.map(|ms| ms.round()),
            "warm_up_ms": warm_up_ms.map(f64::round),
            "converged_s": (converged * 100.0).round() / 100.0,
            "publisher_cpu_s": (published.cpu_seconds * 100.0).round() / 100.0,
            "publisher_thread_cpu_s": (published.thread_cpu_seconds * 100.0).round() / 100.0,
            "subscribers_cpu_s": (subscribers_cpu * 100.0).round() / 100.0,
            "servers": args.urls().len(),
            "killed_server": killed_server,
            "frame_bytes_max": published.frame_bytes_max,
            "pieces_max": published.pieces_max,
            "resyncs_ms": resyncs.iter().map(|(w, ms)| serde_json::json!({"what": w, "ms": ms.round()})).collect::<Vec<_>>(),
            "resync_ms_max": resync_ms_max.map(f64::round),
            "subscriber_rss_bytes": subscriber_rss,
            "subscriber_peak_rss_bytes": subscriber_peak_rss,
            "processes": args.processes,
            "publisher_process_rss_bytes": rss_end,
            "servers_disk_bytes": disk.map(|d| d.into_iter().map(|(n, b)| (n, b.into())).collect::<serde_json::Map<_, _>>()),
        })
    );
    if !equal {
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Parsed, String> {
        parse_args(args.iter().map(|s| (*s).to_string()))
    }

    /// Help is asked for, not an error.
    #[test]
    fn help_is_not_an_error() {
        assert_eq!(parse(&["--help"]), Ok(Parsed::Help));
        assert_eq!(parse(&["--keys", "10", "-h"]), Ok(Parsed::Help));
    }

    /// Each refusal names the flag and why.
    #[test]
    fn errors_name_the_flag_and_the_reason() {
        assert_eq!(
            parse(&["--subscribers", "1"]),
            Err(
                "--subscribers 1 is too few: the run needs at least 2 (one is stopped and \
                 restarted, one joins late)"
                    .into()
            )
        );
        assert_eq!(
            parse(&["--updates", "1"]),
            Err(
                "--updates 1 is too few: the run needs at least 2 (a subscriber joins after half)"
                    .into()
            )
        );
        assert_eq!(
            parse(&["--churn", "1.5"]),
            Err("--churn 1.5 is not a fraction of the keys in [0, 1]".into())
        );
        assert_eq!(
            parse(&["--keys", "0"]),
            Err("--keys 0: the publisher needs at least 1 key".into())
        );
        assert_eq!(
            parse(&["--keys", "many"]),
            Err("--keys takes a whole number, not `many`".into())
        );
        assert_eq!(parse(&["--keys"]), Err("--keys needs a value".into()));
        assert_eq!(
            parse(&["--subscribers", "4", "--processes", "3"]),
            Err(
                "--processes 3 is more than the 2 subscribers that run in workers (all but the \
                 restarted one and the late joiner)"
                    .into()
            )
        );
        assert_eq!(
            parse(&["--subscriber-worker", "3"]),
            Err("--subscriber-worker takes FIRST:COUNT, not `3`".into())
        );
        assert_eq!(
            parse(&["--kind", "ribbon"]),
            Err("--kind takes standard, sparse or auto, not `ribbon`".into())
        );
        assert_eq!(
            parse(&["--subscriber", "3"]),
            Err("unknown argument `--subscriber`".into())
        );
    }

    /// The flags are read into the run's arguments.
    #[test]
    fn flags_are_read() {
        let Ok(Parsed::Run(a)) = parse(&[
            "--server",
            "nats://h:1",
            "--subscribers",
            "3",
            "--updates",
            "4",
            "--churn",
            "0.5",
            "--keys",
            "7",
            "--full-period-ms",
            "9",
            "--processes",
            "1",
            "--subscriber-worker",
            "1:2",
            "--kind",
            "sparse",
        ]) else {
            panic!("not a run")
        };
        assert_eq!(
            a,
            Args {
                server: "nats://h:1".into(),
                subscribers: 3,
                updates: 4,
                churn: 0.5,
                keys: 7,
                fpr: 0.01,
                full_period_ms: 9,
                cluster: None,
                cluster_dir: None,
                kill_server_at: None,
                processes: 1,
                worker: Some((1, 2)),
                kind: Some(FilterKind::Sparse),
            }
        );
    }

    /// The filter is the CLI's plan for a coded frame at f <= 0.01, not the
    /// uncompressed optimum (k = 7, 9.59 bits per key).
    #[test]
    fn the_filter_is_planned_for_a_coded_frame() {
        assert_eq!(
            plan_params(100_000, 0.01, None).unwrap().0,
            FilterKind::Standard
        );
        let (kind, p) = plan_params(100_000, 0.01, Some(FilterKind::Standard)).unwrap();
        assert_eq!(kind, FilterKind::Standard);
        let f = compressed_bloom::plan::fpr_finite(p.m, 100_000, p.k);
        assert!(f <= 0.01, "f = {f}");
        assert!(p.k < 7, "k = {}", p.k);
    }

    /// Left to the planner, 10^7 keys at f = 10^-4 go as a sparse filter:
    /// the standard one with the same frame would hold 249 MB.
    #[test]
    fn the_planner_picks_the_sparse_kind_at_scale() {
        let (kind, p) = plan_params(10_000_000, 0.0001, None).unwrap();
        assert_eq!(kind, FilterKind::Sparse);
        assert_eq!(p.k, 1);
        let (kind, p) = plan_params(10_000_000, 0.0001, Some(FilterKind::Standard)).unwrap();
        assert_eq!(kind, FilterKind::Standard);
        assert!(p.m / 10_000_000 > 100, "m = {}", p.m);
    }

    /// The sparse publisher's positions follow its keys: after keys are
    /// replaced, its filter is the one built from the keys it holds.
    #[test]
    fn sparse_updates_hold_the_current_keys() {
        // A small m, so that keys share positions.
        let params = FilterParams::new(5_000, 2, 7);
        let (mut p, mut keys) = SparseFilter::start(params, 0..1000);
        for step in 0..5u64 {
            let (old, new) = (step * 300, 1000 + step * 300);
            SparseFilter::replace(&mut p, &mut keys, old..old + 300, new..new + 300);
            let want = SparseFilter::from_keys(params, (old + 300..new + 300).map(key)).unwrap();
            assert_eq!(p.filter(), Some(&want), "step {step}");
        }
    }
}
