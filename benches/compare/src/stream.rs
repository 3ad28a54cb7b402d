//! The streaming codec (`format::stream`) on a 2^33-bit (1 GiB) filter,
//! k = 2, n = 5·10^7: each mode runs in a child process of its own, which
//! reports its wall time and peak RSS (VmHWM), so the peaks do not mix.

use compressed_bloom::format::stream::{read_frame, write_frame};
use compressed_bloom::{decode, BloomFilter, DecodeLimits, FilterParams};
use std::io::{BufReader, BufWriter};
use std::process::Command;
use std::time::Instant;

const M: u64 = 1 << 33;
const N: u64 = 50_000_000;

fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// One mode, in this process: prints `seconds peak_kib detail`.
pub fn child(mode: &str, path: &str) {
    let limits = DecodeLimits {
        max_m: M,
        max_frame_len: u64::MAX,
        max_expansion: None,
        ..DecodeLimits::default()
    };
    let t = Instant::now();
    let detail = match mode {
        "write" => {
            let mut f = BloomFilter::new(FilterParams::new(M, 2, 9)).unwrap();
            for i in 0..N {
                f.insert(&i.to_le_bytes());
            }
            let built = t.elapsed().as_secs_f64();
            let w = BufWriter::with_capacity(1 << 16, std::fs::File::create(path).unwrap());
            let bytes = write_frame(&f, w).unwrap();
            format!("built in {built:.1} s; {bytes} bytes written")
        }
        "read" => {
            let r = BufReader::with_capacity(1 << 16, std::fs::File::open(path).unwrap());
            let f = read_frame(r, &limits).unwrap();
            format!("{} ones", f.count_ones())
        }
        "slurp" => {
            let bytes = std::fs::read(path).unwrap();
            let f = decode(&bytes, &limits).unwrap();
            format!("{} ones", f.count_ones())
        }
        other => panic!("mode {other}: write, read or slurp"),
    };
    println!("{} {} {detail}", t.elapsed().as_secs_f64(), peak_kib());
}

pub fn run() {
    let path = std::env::temp_dir().join("cbloom-stream-2e33.cbf");
    let path = path.to_str().unwrap();
    let exe = std::env::current_exe().unwrap();
    println!("| mode | what | wall time | peak RSS | beyond the 1 GiB filter |");
    println!("|---|---|---|---|---|");
    for (mode, what) in [
        (
            "write",
            "build the filter, then `write_frame` to a `BufWriter<File>`",
        ),
        ("read", "`read_frame` from a `BufReader<File>`"),
        (
            "slurp",
            "`std::fs::read` the file, then `decode` (two threads)",
        ),
    ] {
        let out = Command::new(&exe)
            .args(["stream-child", mode, path])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = String::from_utf8(out.stdout).unwrap();
        let mut parts = line.trim().splitn(3, ' ');
        let secs: f64 = parts.next().unwrap().parse().unwrap();
        let kib: u64 = parts.next().unwrap().parse().unwrap();
        let detail = parts.next().unwrap_or("");
        let beyond = kib as f64 / 1024.0 - (M / 8 / (1 << 20)) as f64;
        println!("| `{mode}` | {what} ({detail}) | {secs:.2} s | {kib} KiB | {beyond:.1} MiB |");
    }
    let _ = std::fs::remove_file(path);
}
