//! The streaming codec on a 2^33-bit (1 GiB) filter: each mode in its own
//! process, so `/usr/bin/time -v` reports its peak RSS.
//!
//!     cargo build --release --example stream_big
//!     /usr/bin/time -v target/release/examples/stream_big write FILE   # build, then write_frame
//!     /usr/bin/time -v target/release/examples/stream_big read FILE    # read_frame
//!     /usr/bin/time -v target/release/examples/stream_big slurp FILE   # read the file, then decode

use compressed_bloom::format::stream::{read_frame, write_frame};
use compressed_bloom::{decode_with_limits, BloomFilter, DecodeLimits, FilterParams};
use std::io::{BufReader, BufWriter};
use std::time::Instant;

const M: u64 = 1 << 33;
const N: u64 = 50_000_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (mode, path) = (args.get(1).map(String::as_str), args.get(2).ok_or("FILE")?);
    let limits = DecodeLimits {
        max_m: M,
        max_frame_len: u64::MAX,
        max_expansion: None,
        ..DecodeLimits::default()
    };
    match mode {
        Some("write") => {
            let t = Instant::now();
            let mut f = BloomFilter::new(FilterParams::new(M, 2, 9))?;
            for i in 0..N {
                f.insert(&i.to_le_bytes());
            }
            let built = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let w = BufWriter::with_capacity(1 << 16, std::fs::File::create(path)?);
            let bytes = write_frame(&f, w)?;
            println!(
                "built m = 2^33 ({} MiB), n = {N} in {built:.1} s; write_frame: {bytes} bytes in {:.2} s",
                M / 8 / (1 << 20),
                t.elapsed().as_secs_f64()
            );
        }
        Some("read") => {
            let t = Instant::now();
            let r = BufReader::with_capacity(1 << 16, std::fs::File::open(path)?);
            let f = read_frame(r, &limits)?;
            println!(
                "read_frame: m = {}, {} ones in {:.2} s",
                f.m(),
                f.count_ones(),
                t.elapsed().as_secs_f64()
            );
        }
        Some("slurp") => {
            let t = Instant::now();
            let bytes = std::fs::read(path)?;
            let f = decode_with_limits(&bytes, &limits)?;
            println!(
                "read + decode: m = {}, {} ones in {:.2} s",
                f.m(),
                f.count_ones(),
                t.elapsed().as_secs_f64()
            );
        }
        _ => return Err("mode: write, read or slurp".into()),
    }
    Ok(())
}
