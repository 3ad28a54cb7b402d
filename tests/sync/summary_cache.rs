//! A small summary-cache exchange over loopback TCP (the simulation of
//! `examples/summary_cache/sim.rs`): after each round every node's view of
//! every peer equals the peer's filter, a frame dropped on purpose is
//! detected (the next delta does not apply to the receiver's version) and
//! repaired by a full frame, and the false-hit rate follows the prediction.
#![cfg(feature = "tokio")]

#[path = "../../examples/summary_cache/sim.rs"]
mod sim;

#[tokio::test(flavor = "current_thread")]
async fn small_exchange_stays_in_sync_and_repairs_a_lost_frame() {
    let cfg = sim::Config {
        nodes: 3,
        capacity: 500,
        universe: 5_000,
        zipf: 0.8,
        requests: 300,
        rounds: 5,
        probes: 3_000,
        drop: vec![(2, 0, 1)],
        full_every: 100,
    };
    let (rounds, _) = sim::run(&cfg).await.unwrap();
    assert_eq!(rounds.len(), 5);
    for r in &rounds {
        assert!(
            r.views_match,
            "round {}: a view differs from its sender",
            r.round
        );
        // Every pair exchanged something each round.
        assert_eq!(r.sent.len(), 6);
        // False hits: binomial over the probes a peer lacked, around the
        // mean predicted rate; 4 standard deviations plus 10% of the rate
        // for the spread of fill^k across the views.
        let (hits, n) = r.false_hits;
        let p = r.predicted;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        let diff = (hits as f64 - n as f64 * p).abs();
        assert!(
            diff <= 4.0 * sd + 0.1 * n as f64 * p,
            "round {}: {hits}/{n} vs {p}",
            r.round
        );
    }
    let kinds: Vec<(usize, usize, usize, &str)> = rounds
        .iter()
        .flat_map(|r| r.sent.iter().map(|s| (s.round, s.from, s.to, s.what)))
        .collect();
    assert!(kinds.contains(&(0, 0, 1, "full")));
    assert!(kinds.contains(&(2, 0, 1, "lost")));
    // The next update from 0 to 1 needed the repair; the others did not.
    assert!(kinds.contains(&(3, 0, 1, "delta+repair")), "{kinds:?}");
    assert!(kinds.contains(&(3, 0, 2, "delta")));
    assert_eq!(kinds.iter().filter(|k| k.3 == "delta+repair").count(), 1);
}
