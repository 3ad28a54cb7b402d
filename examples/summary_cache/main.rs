//! Summary Cache over real sockets: several proxies on 127.0.0.1 exchange
//! compressed filters of their changing caches (see `sim.rs`). Prints, per
//! node and update, the bytes on the wire against a Squid-style digest at
//! 5 bits per entry and against the uncompressed optimal filter, and the
//! measured false-hit rate against the prediction. Bounded: a fixed number
//! of rounds on loopback, then it stops.
//!
//!     cargo run --release --example summary_cache --features tokio

mod sim;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cfg = sim::Config {
        nodes: 4,
        capacity: 5_000,
        universe: 100_000,
        zipf: 0.8,
        requests: 2_000,
        rounds: 8,
        probes: 20_000,
        drop: vec![(3, 0, 1)],
        full_every: 6,
    };
    let t = std::time::Instant::now();
    let (rounds, params) = sim::run(&cfg).await?;
    let squid = sim::squid_digest_bytes(cfg.capacity);
    println!(
        "{} nodes, caches of {} URLs, filter m = {} bits, k = {} (planned for {} keys at the \
         {squid} bytes of a Squid digest of that capacity at 5 bits per entry)\n",
        cfg.nodes, cfg.capacity, params.m, params.k, cfg.capacity
    );
    println!("| round | node | keys | what (to each peer) | bytes per peer | Squid digest | uncompressed optimal |");
    println!("|---|---|---|---|---|---|---|");
    let mut total = (0usize, 0usize, 0usize);
    for r in &rounds {
        for from in 0..cfg.nodes {
            let sent: Vec<&sim::Sent> = r.sent.iter().filter(|s| s.from == from).collect();
            let keys = sent.first().map_or(0, |s| s.keys);
            let f = r.predicted.max(1e-9);
            let optimal = sim::uncompressed_optimal_bytes(keys.max(1), f);
            let whats: Vec<String> = sent
                .iter()
                .map(|s| format!("{}→{}: {}", s.from, s.to, s.what))
                .collect();
            let bytes: Vec<String> = sent.iter().map(|s| s.bytes.to_string()).collect();
            for s in &sent {
                total.0 += s.bytes;
                total.1 += squid;
                total.2 += optimal;
            }
            println!(
                "| {} | {from} | {keys} | {} | {} | {squid} | {optimal} |",
                r.round,
                whats.join(", "),
                bytes.join(", ")
            );
        }
    }
    println!("\n| round | false hits / probes a peer lacked | measured rate | predicted (fill^k) | views equal senders' filters |");
    println!("|---|---|---|---|---|");
    for r in &rounds {
        let (h, n) = r.false_hits;
        println!(
            "| {} | {h} / {n} | {:.5} | {:.5} | {} |",
            r.round,
            h as f64 / n.max(1) as f64,
            r.predicted,
            r.views_match
        );
    }
    println!(
        "\ntotal bytes on the wire: {} (Squid digests: {}, uncompressed optimal filters: {}); {:.2} s",
        total.0,
        total.1,
        total.2,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
