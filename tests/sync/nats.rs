#![cfg(feature = "nats")]
//! The NATS layer against a real `nats-server -js` on a loopback port with
//! a store directory of its own: round trips, late joiners, restarts of the
//! subscriber and of the server, hostile frames on the subjects, and a
//! purged or deleted stream. Every wait is bounded.
//!
//! Without a `nats-server` binary these tests fail, naming what to install:
//! a test that cannot run does not report a pass. `bash tools/test-deps.sh`
//! installs the server where it can; `NATS_SERVER` names another binary.

use compressed_bloom::nats::{
    headers, Event, NatsConfig, NatsPublisher, NatsSubscriber, Snapshot, WaitReason,
};
use compressed_bloom::PublisherOptions;
use compressed_bloom::{
    encode_any, encode_with_identity, AnyFilter, BloomFilter, CountingBloomFilter, DecodeLimits,
    FilterParams, Publisher, Subscriber, SyncError, UpdateId, UpdateKind,
};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::timeout;

const P: FilterParams = FilterParams::new(200_000, 4, 3);
const STREAM: u64 = 7;
/// The bound on any one wait in these tests.
const WAIT: Duration = Duration::from_secs(60);

/// A `nats-server -js` on a free loopback port, its store in a directory
/// that outlives a restart and is removed with the server.
#[derive(Debug)]
struct Server {
    binary: std::ffi::OsString,
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Server {
    /// A started server. Panics, saying how to install one, when there is
    /// no `nats-server` binary.
    fn start() -> Server {
        Server::start_with(server_binary())
    }

    /// A server started from `binary`, which must exist.
    fn start_with(binary: std::ffi::OsString) -> Server {
        let found = Command::new(&binary)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            found,
            "the nats tests need a `nats-server` binary and found none at `{}`: install it \
             (`apt-get install nats-server` on Debian and Ubuntu, or a release from nats.io), \
             set NATS_SERVER to its path, or run `bash tools/test-deps.sh`, which installs it",
            binary.to_string_lossy()
        );
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "cbloom-nats-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut s = Server {
            binary,
            child: None,
            port,
            dir,
        };
        s.restart();
        s
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again, on the same port and store) and waits
    /// until it accepts connections.
    fn restart(&mut self) {
        assert!(self.child.is_none());
        let log = std::fs::File::create(self.dir.join("server.log")).unwrap();
        let child = Command::new(&self.binary)
            .args(["-js", "-a", "127.0.0.1", "-p"])
            .arg(self.port.to_string())
            .arg("-sd")
            .arg(self.dir.join("store"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                std::time::Instant::now() < until,
                "nats-server did not listen on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The server binary: `NATS_SERVER` if set, else `nats-server` on the PATH.
fn server_binary() -> std::ffi::OsString {
    std::env::var_os("NATS_SERVER").unwrap_or_else(|| "nats-server".into())
}

/// A missing server binary fails the test with the install instructions,
/// rather than letting it pass without running.
#[test]
fn a_missing_server_fails_naming_how_to_install_it() {
    let missing = std::env::temp_dir()
        .join("no-such-dir-for-cbloom")
        .join("nats-server");
    let panic = std::panic::catch_unwind(|| Server::start_with(missing.into_os_string()))
        .expect_err("a missing nats-server must fail the test");
    let message = panic
        .downcast_ref::<String>()
        .expect("the failure carries a formatted message");
    assert!(
        message.contains("apt-get install nats-server") && message.contains("tools/test-deps.sh"),
        "{message}"
    );
}

async fn client(s: &Server) -> async_nats::Client {
    async_nats::ConnectOptions::new()
        .retry_on_initial_connect()
        .connect(s.url())
        .await
        .unwrap()
}

/// Subjects in a namespace of their own per test.
fn config(filter: &str) -> NatsConfig {
    let mut c = NatsConfig::new("test.cbloom", filter).unwrap();
    c.full_period = None;
    c.min_backoff = Duration::from_millis(50);
    c.max_backoff = Duration::from_millis(800);
    c.probe_interval = Duration::from_millis(500);
    c
}

fn key(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

/// A publisher of stream 7 with 5,000 keys.
fn publisher(full_every: u32, epoch: u64) -> Publisher {
    let mut p = Publisher::counting(
        P,
        PublisherOptions {
            full_every,
            stream: STREAM,
            epoch: Some(epoch),
            ..PublisherOptions::default()
        },
    )
    .unwrap();
    for i in 0..5_000 {
        p.insert(&key(i));
    }
    p
}

/// Replaces 50 keys (round r), for the next update.
fn churn(p: &mut Publisher, r: u64) {
    for i in 0..50 {
        p.remove(&key(r * 50 + i));
        p.insert(&key(1_000_000 + r * 50 + i));
    }
}

/// `n` updates, each after a churn round; returns the last update's id.
async fn publish_rounds(
    np: &mut NatsPublisher,
    p: &mut Publisher,
    rounds: std::ops::Range<u64>,
) -> UpdateId {
    let mut last = None;
    for r in rounds {
        churn(p, r);
        last = Some(np.publish(p).await.unwrap().id);
    }
    last.unwrap()
}

/// A subscriber driven in a task: its snapshots, and its events on a
/// channel.
struct Running {
    state: watch::Receiver<Snapshot>,
    events: mpsc::UnboundedReceiver<Event>,
    task: JoinHandle<NatsSubscriber>,
    stop: tokio::sync::oneshot::Sender<()>,
}

fn run(mut sub: NatsSubscriber) -> Running {
    let state = sub.watch();
    let (tx, events) = mpsc::unbounded_channel();
    let (stop, mut stopped) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = &mut stopped => return sub,
                e = sub.next_event() => { let _ = tx.send(e); }
            }
        }
    });
    Running {
        state,
        events,
        task,
        stop,
    }
}

impl Running {
    /// Waits until the subscriber holds version `v`, and checks that its
    /// filter is `expected`.
    async fn reaches(&mut self, v: UpdateId, expected: &BloomFilter) {
        let ok = matches!(
            timeout(WAIT, self.state.wait_for(|s| s.version == Some(v))).await,
            Ok(Ok(_))
        );
        if !ok {
            let seen = self.drain();
            panic!("did not reach {v:?}; events: {seen:#?}");
        }
        let snap = self.state.borrow().clone();
        assert_eq!(snap.filter.as_deref(), Some(expected));
    }

    /// The events so far.
    fn drain(&mut self) -> Vec<Event> {
        let mut v = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            v.push(e);
        }
        v
    }

    /// Waits for an event matching `want`, returning those before it too.
    async fn until(&mut self, what: &str, want: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        let r = timeout(WAIT, async {
            while let Some(e) = self.events.recv().await {
                let hit = want(&e);
                seen.push(e);
                if hit {
                    return true;
                }
            }
            false
        })
        .await;
        assert!(matches!(r, Ok(true)), "no {what}; events: {seen:#?}");
        seen
    }

    async fn stop(self) -> NatsSubscriber {
        let _ = self.stop.send(());
        timeout(WAIT, self.task).await.unwrap().unwrap()
    }
}

fn need_full(e: &Event) -> bool {
    matches!(
        e,
        Event::Skipped {
            reason: SyncError::NeedFull { .. },
            ..
        }
    )
}

/// What a refused frame's error must be.
type Refusal = fn(&SyncError) -> bool;

/// A test body under an overall bound.
async fn bounded(body: impl std::future::Future<Output = ()>) {
    timeout(Duration::from_secs(300), body)
        .await
        .expect("test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_updates_reach_every_subscriber_equal() {
    let server = Server::start();
    bounded(async {
        let c = client(&server).await;
        let cfg = config("roundtrip");
        let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
        let mut subs: Vec<Running> = (0..3)
            .map(|_| {
                run(NatsSubscriber::new(
                    c.clone(),
                    cfg.clone(),
                    Subscriber::following(STREAM, DecodeLimits::default()),
                ))
            })
            .collect();
        let mut p = publisher(16, 100);
        let last = publish_rounds(&mut np, &mut p, 0..60).await;
        let expected = p.current();
        for s in &mut subs {
            s.reaches(last, &expected).await;
        }
        for mut s in subs {
            let events = s.drain();
            assert!(
                !events.iter().any(|e| matches!(e, Event::Skipped { .. })),
                "{events:#?}"
            );
            s.stop().await;
        }
        let stats = np.stats();
        assert_eq!(stats.updates, 60);
        // Full frames at 0, 16, 32, 48; the rest smaller deltas.
        assert_eq!(stats.full_updates, 4);
        assert_eq!(stats.full_copies, 4);
        assert!(stats.update_bytes < 60 * encode_with_identity(&expected, last).len() as u64 / 2);

        // The headers name the update; the full-frame subject keeps one
        // message, the update subject all 60.
        let js = async_nats::jetstream::new(c.clone());
        let mut stream = js.get_stream(cfg.stream_name()).await.unwrap();
        let m = stream
            .get_last_raw_message_by_subject(&cfg.update_subject())
            .await
            .unwrap();
        assert_eq!(
            headers::identity(&m.headers),
            Some((UpdateKind::Delta, last))
        );
        let f = stream
            .get_last_raw_message_by_subject(&cfg.full_subject())
            .await
            .unwrap();
        let (kind, id) = headers::identity(&f.headers).unwrap();
        assert_eq!((kind, id.seq), (UpdateKind::Full, 48));
        assert_eq!(stream.info().await.unwrap().state.messages, 61);

        // A restarted publisher (larger epoch) supersedes the old one.
        let mut sub = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        sub.reaches(last, &expected).await;
        let mut p2 = publisher(16, 200);
        let last2 = publish_rounds(&mut np, &mut p2, 100..103).await;
        sub.reaches(last2, &p2.current()).await;
        sub.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_update_is_applied_once_in_order() {
    let server = Server::start();
    bounded(async {
        let c = client(&server).await;
        let cfg = config("ordered");
        let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
        let mut sub = run(NatsSubscriber::new(
            c.clone(),
            cfg,
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        let mut p = publisher(1000, 100);
        let last = publish_rounds(&mut np, &mut p, 0..30).await;
        let seen = sub
            .until(
                "the last update",
                |e| matches!(e, Event::Applied { version: Some(v), .. } if *v == last),
            )
            .await;
        // The first update is full: no full-frame copy yet when the
        // subscriber started, so it took it from the update subject.
        let mut applied = Vec::new();
        for e in &seen {
            match e {
                Event::Applied {
                    kind,
                    version: Some(v),
                    ..
                } => applied.push((*kind, v.seq)),
                Event::Waiting {
                    reason: WaitReason::NoFullFrame | WaitReason::StreamMissing,
                    ..
                } if applied.is_empty() => {}
                Event::Resynchronised {
                    version: Some(v), ..
                } if applied.is_empty() => applied.push((UpdateKind::Full, v.seq)),
                e => panic!("unexpected {e:?} in {seen:#?}"),
            }
        }
        let want: Vec<(UpdateKind, u64)> = (0..30)
            .map(|s| {
                let kind = if s == 0 {
                    UpdateKind::Full
                } else {
                    UpdateKind::Delta
                };
                (kind, s)
            })
            .collect();
        assert_eq!(applied, want);
        assert_eq!(sub.state.borrow().filter.as_deref(), Some(&p.current()));
        sub.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_joiner_starts_from_the_full_frame_without_losing_a_delta() {
    let server = Server::start();
    bounded(async {
        let c = client(&server).await;
        let cfg = config("late");
        let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
        let mut p = publisher(10, 100);
        publish_rounds(&mut np, &mut p, 0..25).await;

        // The joiner takes the full frame of version 20 and the deltas
        // after it, nothing older.
        let mut late = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        let first = late
            .until("resynchronisation", |e| {
                matches!(e, Event::Resynchronised { .. })
            })
            .await;
        match first.last() {
            Some(Event::Resynchronised {
                previous: None,
                version: Some(v),
                ..
            }) => assert_eq!(v.seq, 20),
            e => panic!("unexpected {e:?}"),
        }
        let expected_seqs: Vec<u64> = (21..25).collect();
        let mut seqs = Vec::new();
        while seqs.len() < expected_seqs.len() {
            match timeout(WAIT, late.events.recv()).await.unwrap().unwrap() {
                Event::Applied {
                    kind: UpdateKind::Delta,
                    version: Some(v),
                    ..
                } => seqs.push(v.seq),
                e => panic!("unexpected {e:?}"),
            }
        }
        assert_eq!(seqs, expected_seqs);

        // Joiners that start while updates are being published: each ends
        // equal, and none ever sees a gap (the race between fetching the
        // full frame and starting the consumer loses nothing).
        let mut joiners = Vec::new();
        let mut last = None;
        for r in 25..65 {
            churn(&mut p, r);
            last = Some(np.publish(&mut p).await.unwrap().id);
            if r % 8 == 0 {
                joiners.push(run(NatsSubscriber::new(
                    c.clone(),
                    cfg.clone(),
                    Subscriber::following(STREAM, DecodeLimits::default()),
                )));
            }
        }
        let last = last.unwrap();
        let expected = p.current();
        late.reaches(last, &expected).await;
        for mut j in joiners.into_iter().chain([late]) {
            j.reaches(last, &expected).await;
            let events = j.drain();
            assert!(!events.iter().any(need_full), "{events:#?}");
            assert!(
                !events.iter().any(|e| matches!(e, Event::Waiting { .. })),
                "{events:#?}"
            );
            j.stop().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_subscriber_catches_up_with_or_without_its_state() {
    let server = Server::start();
    bounded(async {
        let c = client(&server).await;
        let cfg = config("restart");
        let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
        // Only the first update is full: a fresh subscriber starts from it
        // and replays the history.
        let mut p = publisher(1000, 100);
        let mut sub = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        let v = publish_rounds(&mut np, &mut p, 0..10).await;
        sub.reaches(v, &p.current()).await;
        let kept = sub.stop().await.into_subscriber();
        assert_eq!(kept.version(), Some(v));

        let last = publish_rounds(&mut np, &mut p, 10..25).await;
        let expected = p.current();
        let mut fresh = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        let mut resumed = run(NatsSubscriber::new(c.clone(), cfg.clone(), kept));
        fresh.reaches(last, &expected).await;
        resumed.reaches(last, &expected).await;
        for mut s in [fresh, resumed] {
            let events = s.drain();
            assert!(!events.iter().any(need_full), "{events:#?}");
            s.stop().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_catch_up_after_the_server_restarts() {
    let mut server = Server::start();
    bounded(async {
        let c = client(&server).await;
        let cfg = config("server-restart");
        let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
        let mut p = publisher(1000, 100);
        let mut sub = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        let v = publish_rounds(&mut np, &mut p, 0..10).await;
        sub.reaches(v, &p.current()).await;

        server.stop();
        sub.until("wait for the server", |e| {
            matches!(
                e,
                Event::Waiting {
                    reason: WaitReason::Server(_),
                    ..
                }
            )
        })
        .await;
        server.restart();
        // The store survived: updates go on from where they were.
        let last = publish_rounds(&mut np, &mut p, 10..20).await;
        let expected = p.current();
        sub.reaches(last, &expected).await;
        let mut late = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        late.reaches(last, &expected).await;
        sub.stop().await;
        late.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_frames_on_the_subject_are_refused_and_the_state_is_kept() {
    let server = Server::start();
    bounded(async {
        let c = client(&server).await;
        let cfg = config("hostile");
        let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
        let limits = DecodeLimits {
            max_m: 400_000,
            ..DecodeLimits::default()
        };
        let mut sub = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, limits),
        ));
        let mut p = publisher(1000, 100);
        let v = publish_rounds(&mut np, &mut p, 0..5).await;
        let held = p.current();
        sub.reaches(v, &held).await;

        // A real next delta with one byte flipped: the CRC refuses it.
        let mut probe = p.clone();
        churn(&mut probe, 5);
        let mut corrupt = probe.publish().frame;
        let mid = corrupt.len() / 2;
        corrupt[mid] ^= 0x40;
        // A full frame of another stream, newer than what is held.
        let mut other = Publisher::counting(
            P,
            PublisherOptions {
                full_every: 1,
                stream: 8,
                epoch: Some(999),
                ..PublisherOptions::default()
            },
        )
        .unwrap();
        other.insert(b"x");
        let foreign = other.publish().frame;
        // Another kind (a counting filter, no update identity).
        let mut counting = CountingBloomFilter::new(P).unwrap();
        counting.insert(b"x");
        let kind = encode_any(&AnyFilter::Counting(counting));
        // A filter larger than the limits, of the right stream.
        let mut big = BloomFilter::new(FilterParams::new(1_000_000, 4, 3)).unwrap();
        big.insert(b"x");
        let too_large = encode_with_identity(
            &big,
            UpdateId {
                stream: STREAM,
                epoch: 999,
                seq: 0,
            },
        );
        let js = async_nats::jetstream::new(c.clone());
        let cases: [(&str, Vec<u8>, Refusal); 5] = [
            ("corrupt", corrupt, |e| matches!(e, SyncError::Decode(_))),
            ("foreign", foreign, |e| {
                matches!(e, SyncError::WrongStream { found: 8, .. })
            }),
            ("kind", kind, |e| {
                matches!(e, SyncError::Decode(_) | SyncError::Unordered { .. })
            }),
            ("large", too_large, |e| matches!(e, SyncError::Decode(_))),
            ("garbage", b"not a frame".to_vec(), |e| {
                matches!(e, SyncError::Decode(_))
            }),
        ];
        for (what, frame, want) in cases {
            js.publish(cfg.update_subject(), frame.into())
                .await
                .unwrap()
                .await
                .unwrap();
            let seen = sub
                .until(what, |e| matches!(e, Event::Skipped { .. }))
                .await;
            match seen.last() {
                Some(Event::Skipped {
                    reason,
                    from_full_subject: false,
                    ..
                }) => assert!(want(reason), "{what}: {reason}"),
                e => panic!("{what}: {e:?}"),
            }
            let snap = sub.state.borrow().clone();
            assert_eq!(snap.version, Some(v), "{what}");
            assert_eq!(snap.filter.as_deref(), Some(&held), "{what}");
        }

        // The stream goes on: the next updates apply, no gap.
        let last = publish_rounds(&mut np, &mut p, 5..10).await;
        sub.reaches(last, &p.current()).await;
        let events = sub.drain();
        assert!(!events.iter().any(need_full), "{events:#?}");
        sub.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purged_stream_is_caught_up_from_the_next_full_frame() {
    let server = Server::start();
    bounded(async {
        let c = client(&server).await;
        let mut cfg = config("purge");
        cfg.full_period = Some(Duration::from_millis(1500));
        let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
        let mut p = publisher(1000, 100);
        let mut sub = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        let v = publish_rounds(&mut np, &mut p, 0..5).await;
        sub.reaches(v, &p.current()).await;
        let kept = sub.stop().await.into_subscriber();

        // Away while updates go out and the stream is purged: the deltas it
        // missed, and the full frame, are gone.
        publish_rounds(&mut np, &mut p, 5..10).await;
        let js = async_nats::jetstream::new(c.clone());
        js.get_stream(cfg.stream_name())
            .await
            .unwrap()
            .purge()
            .await
            .unwrap();
        let v = publish_rounds(&mut np, &mut p, 10..12).await;

        let mut sub = run(NatsSubscriber::new(c.clone(), cfg.clone(), kept));
        let seen = sub.until("gap", need_full).await;
        assert!(
            seen.iter().any(|e| matches!(
                e,
                Event::Waiting {
                    reason: WaitReason::NoFullFrame,
                    ..
                }
            )),
            "{seen:#?}"
        );
        // Nothing to resynchronise from yet: it waits, with backoff.
        tokio::time::sleep(Duration::from_millis(1600)).await;
        assert_eq!(sub.state.borrow().version.map(|v| v.seq), Some(4));
        let waits = sub
            .drain()
            .into_iter()
            .filter(|e| matches!(e, Event::Waiting { .. }))
            .count();
        assert!(waits <= 10, "{waits} waits in 1.6 s");
        // The publisher's next update comes with a full copy (the period
        // passed): the subscriber resynchronises.
        assert!(np.refresh(&p).await.unwrap());
        sub.until("resynchronisation", |e| {
            matches!(e, Event::Resynchronised { .. })
        })
        .await;
        sub.reaches(v, &p.current()).await;
        let last = publish_rounds(&mut np, &mut p, 12..15).await;
        sub.reaches(last, &p.current()).await;
        sub.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_stream_is_waited_for_and_resynchronised() {
    let server = Server::start();
    bounded(async {
        let c = client(&server).await;
        let cfg = config("delete");
        let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
        let mut p = publisher(1000, 100);
        let mut sub = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        let v = publish_rounds(&mut np, &mut p, 0..5).await;
        sub.reaches(v, &p.current()).await;

        let js = async_nats::jetstream::new(c.clone());
        js.delete_stream(cfg.stream_name()).await.unwrap();
        sub.until("missing stream", |e| {
            matches!(
                e,
                Event::Waiting {
                    reason: WaitReason::StreamMissing,
                    ..
                }
            )
        })
        .await;
        // It does not spin: within 2 s, a handful of attempts.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let waits = sub
            .drain()
            .into_iter()
            .filter(|e| matches!(e, Event::Waiting { .. }))
            .count();
        assert!(waits <= 10, "{waits} waits in 2 s");
        assert_eq!(sub.state.borrow().version, Some(v));

        // The publisher creates the stream again on its next update and
        // puts a full frame: the subscriber notices the new stream and
        // resynchronises.
        let last = publish_rounds(&mut np, &mut p, 5..8).await;
        let seen = sub
            .until("resynchronisation", |e| {
                matches!(e, Event::Resynchronised { .. })
            })
            .await;
        assert!(
            seen.iter().any(|e| matches!(e, Event::StreamReplaced)),
            "{seen:#?}"
        );
        sub.reaches(last, &p.current()).await;
        sub.stop().await;
    })
    .await;
}

/// Publishes `rounds` versions of `make` through JetStream on subject
/// `filter` and follows them with a subscriber of every kind
/// (`AnyFilter`): it must end on the publisher's last version, with the
/// same content digest.
async fn kind_over_nats<F: compressed_bloom::Kind + Send + Sync + 'static>(
    c: &async_nats::Client,
    filter: &str,
    make: impl Fn(u64) -> F,
) {
    let cfg = config(filter);
    let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
    let mut sub: NatsSubscriber<AnyFilter> = NatsSubscriber::new(
        c.clone(),
        cfg,
        Subscriber::<AnyFilter>::following(STREAM, DecodeLimits::default()),
    );
    let mut p = Publisher::new(
        make(0),
        PublisherOptions {
            full_every: 100,
            stream: STREAM,
            epoch: Some(1),
            ..PublisherOptions::default()
        },
    );
    let mut last = None;
    for r in 0..8 {
        *p.filter_mut().unwrap() = make(r);
        last = Some(np.publish(&mut p).await.unwrap());
    }
    let last = last.unwrap();
    assert!(
        matches!(last.kind, UpdateKind::Delta),
        "{filter}: updates go as deltas"
    );
    let reached = timeout(WAIT, async {
        while sub.version() != Some(last.id) {
            sub.next_event().await;
        }
    })
    .await;
    assert!(reached.is_ok(), "{filter}: did not reach {:?}", last.id);
    let held = sub.filter().unwrap();
    assert_eq!(held.kind(), F::KIND, "{filter}");
    assert_eq!(
        compressed_bloom::Kind::digest(held),
        p.current().digest(),
        "{filter}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_travels_through_jetstream() {
    use compressed_bloom::kinds::partitioned::PartitionedBloomFilter;
    use compressed_bloom::kinds::scalable::{ScalableBloomFilter, ScalablePolicy};
    use compressed_bloom::kinds::sparse::SparseFilter;
    let server = Server::start();
    bounded(async {
        let c = client(&server).await;
        let window = |r: u64| (r * 20..r * 20 + 2_000).map(key);
        kind_over_nats(&c, "partitioned", |r| {
            let mut f = PartitionedBloomFilter::new(P).unwrap();
            window(r).for_each(|k| f.insert(&k));
            f
        })
        .await;
        kind_over_nats(&c, "counting", |r| {
            let mut f = CountingBloomFilter::new(P).unwrap();
            window(r).for_each(|k| f.insert(&k));
            f
        })
        .await;
        kind_over_nats(&c, "scalable", |r| {
            let mut f = ScalableBloomFilter::new(ScalablePolicy::new(500, 0.01), 3).unwrap();
            (0..2_000 + r * 20).for_each(|i| f.insert(&key(i)));
            f
        })
        .await;
        kind_over_nats(&c, "sparse", |r| {
            SparseFilter::from_keys(FilterParams::new(1 << 40, 1, 3), window(r)).unwrap()
        })
        .await;
    })
    .await;
}
