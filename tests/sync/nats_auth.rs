#![cfg(feature = "nats")]
//! A fleet where only the publisher moves subscribers, against a real
//! `nats-server`: with docs/fleet-permissions.conf a subscriber's
//! credentials cannot put a frame on the filter's subjects nor purge the
//! stream; on a broker that lets anyone publish, subscribers that take
//! only signed frames skip every forgery (a pinning full frame, a no-op
//! delta, a frame of another kind) and end equal to the publisher.

use compressed_bloom::ed25519_dalek::SigningKey;
use compressed_bloom::kinds::ribbon::RibbonFilter;
use compressed_bloom::nats::{Event, NatsConfig, NatsPublisher, NatsSubscriber, Snapshot};
use compressed_bloom::{
    encode_with_identity, BloomFilter, Coding, DecodeLimits, FilterParams, Kind, Publisher,
    PublisherOptions, Subscriber, SyncError, UpdateId,
};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::timeout;

const P: FilterParams = FilterParams::new(100_000, 4, 3);
const STREAM: u64 = 11;
const WAIT: Duration = Duration::from_secs(60);
const PUBLISHER_PASS: &str = "publisher-secret";
const SUBSCRIBER_PASS: &str = "subscriber-secret";

/// A `nats-server -js` on a free loopback port, from the documented
/// permissions file or with no authorisation at all.
struct Server {
    child: Child,
    port: u16,
    /// The store and the log, removed with the server.
    _dir: tempfile::TempDir,
}

impl Server {
    fn start(with_permissions: bool) -> Server {
        let binary = std::env::var_os("NATS_SERVER").unwrap_or_else(|| "nats-server".into());
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let store = dir.path().join("store");
        let mut cmd = Command::new(&binary);
        if with_permissions {
            let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/fleet-permissions.conf");
            cmd.arg("-c").arg(conf);
        } else {
            cmd.args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
                .arg(&store);
        }
        let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
        let child = cmd
            .env("CBLOOM_NATS_PORT", port.to_string())
            .env("CBLOOM_NATS_STORE", &store)
            .env("CBLOOM_PUBLISHER_PASS", PUBLISHER_PASS)
            .env("CBLOOM_SUBSCRIBER_PASS", SUBSCRIBER_PASS)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "the nats tests need a `nats-server` binary ({}): {e}; run `bash \
                     tools/test-deps.sh`, which installs it, or set NATS_SERVER",
                    binary.to_string_lossy()
                )
            });
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < until,
                "nats-server did not listen: {}",
                log_of(dir.path())
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Server {
            child,
            port,
            _dir: dir,
        }
    }

    async fn client(&self, user: Option<(&str, &str)>) -> async_nats::Client {
        let opts = match user {
            Some((u, p)) => async_nats::ConnectOptions::with_user_and_password(u.into(), p.into()),
            None => async_nats::ConnectOptions::new(),
        };
        opts.connect(format!("nats://127.0.0.1:{}", self.port))
            .await
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn log_of(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
}

fn config() -> NatsConfig {
    let mut c = NatsConfig::new("cbloom", "revoked").unwrap();
    c.full_period = None;
    c.min_backoff = Duration::from_millis(50);
    c.max_backoff = Duration::from_millis(800);
    c.probe_interval = Duration::from_millis(500);
    c
}

fn publisher(key: Option<SigningKey>) -> Publisher {
    let mut p = Publisher::counting(
        P,
        PublisherOptions {
            stream: STREAM,
            epoch: Some(100),
            full_every: 8,
            signing_key: key,
            ..PublisherOptions::default()
        },
    )
    .unwrap();
    for i in 0..2_000u64 {
        p.insert(&i.to_le_bytes());
    }
    p
}

/// A subscriber driven in a task, its snapshots and events.
struct Running {
    state: watch::Receiver<Snapshot>,
    events: mpsc::UnboundedReceiver<Event>,
}

fn run(mut sub: NatsSubscriber) -> Running {
    let state = sub.watch();
    let (tx, events) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let e = sub.next_event().await;
            if tx.send(e).is_err() {
                return;
            }
        }
    });
    Running { state, events }
}

impl Running {
    async fn reaches(&mut self, v: UpdateId, expected: &BloomFilter) {
        let reached = matches!(
            timeout(WAIT, self.state.wait_for(|s| s.version == Some(v))).await,
            Ok(Ok(_))
        );
        if !reached {
            panic!("did not reach {v:?}: {:#?}", self.drain());
        }
        assert_eq!(self.state.borrow().filter.as_deref(), Some(expected));
    }

    fn drain(&mut self) -> Vec<Event> {
        let mut v = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            v.push(e);
        }
        v
    }
}

/// What someone who may publish on the subjects can make from FORMAT.md:
/// a full frame at the last version there is, a no-op delta claiming the
/// next version, and a ribbon filter's frame.
fn forgeries(held: &BloomFilter, next: UpdateId) -> Vec<Vec<u8>> {
    let pin = UpdateId {
        epoch: u64::MAX,
        seq: u64::MAX,
        ..next
    };
    let ribbon = RibbonFilter::from_keys([b"forged".as_slice()], 0.01, 3).unwrap();
    vec![
        encode_with_identity(held, pin),
        compressed_bloom::delta::encode_delta_with_identity(held, held, next).unwrap(),
        ribbon.encode_frame(Coding::Auto, Some(next)),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_publishers_user_can_publish_on_the_subjects() {
    let server = Server::start(true);
    let body = async {
        let cfg = config();
        let pc = server.client(Some(("publisher", PUBLISHER_PASS))).await;
        let sc = server.client(Some(("subscriber", SUBSCRIBER_PASS))).await;
        let mut np = NatsPublisher::new(pc.clone(), cfg.clone()).await.unwrap();
        let mut p = publisher(None);
        let mut sub = run(NatsSubscriber::new(
            sc.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        let mut last = np.publish(&mut p).await.unwrap().id;
        for i in 0..3u64 {
            p.insert(&(10_000 + i).to_le_bytes());
            last = np.publish(&mut p).await.unwrap().id;
        }
        sub.reaches(last, &p.current()).await;

        // The subscriber's credentials try to publish forgeries, to both
        // subjects, through core NATS and through JetStream.
        let js = async_nats::jetstream::new(sc.clone());
        let mut stream = js.get_stream(cfg.stream_name()).await.unwrap();
        let before = stream.info().await.unwrap().state.messages;
        let next = UpdateId {
            seq: last.seq + 1,
            ..last
        };
        let forged = forgeries(&p.current(), next);
        for frame in &forged {
            for subject in [cfg.update_subject(), cfg.full_subject()] {
                let _ = sc.publish(subject, frame.clone().into()).await;
            }
        }
        // Through JetStream, the publish is never acknowledged.
        for subject in [cfg.update_subject(), cfg.full_subject()] {
            let acked = match js.publish(subject, forged[0].clone().into()).await {
                Ok(ack) => timeout(Duration::from_secs(3), ack)
                    .await
                    .ok()
                    .and_then(|a| a.ok()),
                Err(_) => None,
            };
            assert!(acked.is_none(), "the server stored a subscriber's frame");
        }
        sc.flush().await.unwrap();
        // Nor may it purge or delete the stream.
        assert!(
            stream.purge().await.is_err(),
            "a subscriber purged the stream"
        );
        assert!(
            js.delete_stream(cfg.stream_name()).await.is_err(),
            "a subscriber deleted the stream"
        );
        assert_eq!(
            stream.info().await.unwrap().state.messages,
            before,
            "nothing was stored"
        );

        // The publisher's next update still moves the subscriber, which
        // never saw a forgery.
        p.insert(b"after the attempt");
        let after = np.publish(&mut p).await.unwrap().id;
        sub.reaches(after, &p.current()).await;
        let events = sub.drain();
        assert!(
            !events.iter().any(|e| matches!(e, Event::Skipped { .. })),
            "{events:#?}"
        );
    };
    timeout(Duration::from_secs(300), body)
        .await
        .expect("test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_frames_hold_on_a_broker_that_lets_anyone_publish() {
    let server = Server::start(false);
    let body = async {
        let cfg = config();
        let key = SigningKey::from_bytes(&[42; 32]);
        let c = server.client(None).await;
        let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
        let mut p = publisher(Some(key.clone()));
        let mut sub = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default())
                .verifying_keys([key.verifying_key()]),
        ));
        np.publish(&mut p).await.unwrap();
        p.insert(b"one");
        let mut last = np.publish(&mut p).await.unwrap().id;
        sub.reaches(last, &p.current()).await;

        // Anyone may publish here: the forgeries reach the stream, and the
        // subscriber skips each one as unsigned.
        let js = async_nats::jetstream::new(c.clone());
        let next = UpdateId {
            seq: last.seq + 1,
            ..last
        };
        let forged = forgeries(&p.current(), next);
        for frame in &forged {
            for subject in [cfg.update_subject(), cfg.full_subject()] {
                js.publish(subject, frame.clone().into())
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
        }
        let mut unsigned = 0;
        let r = timeout(WAIT, async {
            while unsigned < forged.len() {
                match sub.events.recv().await {
                    Some(Event::Skipped {
                        reason: SyncError::Unsigned,
                        ..
                    }) => unsigned += 1,
                    Some(Event::Skipped { reason, .. }) => {
                        panic!("skipped for another reason: {reason}")
                    }
                    Some(_) => {}
                    None => return,
                }
            }
        })
        .await;
        assert!(
            r.is_ok() && unsigned >= forged.len(),
            "{unsigned} forgeries refused as unsigned"
        );
        assert_eq!(
            sub.state.borrow().version,
            Some(last),
            "a forgery moved the subscriber"
        );

        // The publisher's updates still apply, and the subscriber ends equal.
        for i in 0..3u64 {
            p.insert(&(20_000 + i).to_le_bytes());
            last = np.publish(&mut p).await.unwrap().id;
        }
        sub.reaches(last, &p.current()).await;
    };
    timeout(Duration::from_secs(300), body)
        .await
        .expect("test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_without_keys_recovers_from_a_pinning_frame() {
    // Without keys a forged frame at the last version there is is taken,
    // and every real frame after it is stale. After stale_timeout of that,
    // with the full-frame subject stale too, the subscriber drops the
    // pinned version for the publisher's full frame.
    let server = Server::start(false);
    let body = async {
        let mut cfg = config();
        cfg.stale_timeout = Duration::from_secs(1);
        let c = server.client(None).await;
        let mut np = NatsPublisher::new(c.clone(), cfg.clone()).await.unwrap();
        let mut p = publisher(None);
        let mut sub = run(NatsSubscriber::new(
            c.clone(),
            cfg.clone(),
            Subscriber::following(STREAM, DecodeLimits::default()),
        ));
        let mut last = np.publish(&mut p).await.unwrap().id;
        sub.reaches(last, &p.current()).await;

        let pin = UpdateId {
            epoch: u64::MAX,
            seq: u64::MAX,
            ..last
        };
        let js = async_nats::jetstream::new(c.clone());
        let forged = encode_with_identity(&BloomFilter::new(P).unwrap(), pin);
        js.publish(cfg.update_subject(), forged.into())
            .await
            .unwrap()
            .await
            .unwrap();
        let pinned = matches!(
            timeout(WAIT, sub.state.wait_for(|s| s.version == Some(pin))).await,
            Ok(Ok(_))
        );
        assert!(pinned, "the forged frame was not taken");

        // The publisher goes on (a full frame every 8 updates); its frames
        // are stale to the pinned subscriber until it unpins.
        for i in 0..24u64 {
            p.insert(&(30_000 + i).to_le_bytes());
            last = np.publish(&mut p).await.unwrap().id;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        sub.reaches(last, &p.current()).await;
        let events = sub.drain();
        let unpinned = events.iter().find_map(|e| match e {
            Event::Unpinned { previous, .. } => Some(*previous),
            _ => None,
        });
        assert_eq!(unpinned, Some(Some(pin)), "{events:#?}");
    };
    timeout(Duration::from_secs(300), body)
        .await
        .expect("test timed out");
}
