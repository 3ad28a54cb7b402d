use compressed_bloom::{coder, math::log2_binomial, BloomFilter, FilterParams};
use std::time::Instant;
fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let (n, m, k) = (args[0], args[1], args[2] as u32);
    let threads = *args.get(3).unwrap_or(&1) as usize;
    let mut f = BloomFilter::new(FilterParams::new(m, k, 1)).unwrap();
    for i in 0..n {
        f.insert(&i.to_le_bytes());
    }
    let x = f.count_ones();
    let bound = log2_binomial(m, x) / 8.0;
    let mut out = Vec::new();
    let t = Instant::now();
    for _ in 0..3 {
        out.clear();
        coder::encode_with_threads(f.as_words(), m, &mut out, threads);
    }
    let enc = t.elapsed().as_secs_f64() / 3.0;
    let mut w = vec![0u64; f.as_words().len()];
    let t = Instant::now();
    for _ in 0..3 {
        w.iter_mut().for_each(|v| *v = 0);
        coder::decode_with_threads(&out, m, &mut w, threads).unwrap();
    }
    let dec = t.elapsed().as_secs_f64() / 3.0;
    assert_eq!(w, f.as_words());
    let mb = m as f64 / 8e6;
    println!("m={m} k={k} ones={x} density={:.4} bytes={} bound={:.1} over={:.4}% (+{:.1} B) enc={:.0} MB/s dec={:.0} MB/s",
        x as f64 / m as f64, out.len(), bound, (out.len() as f64 / bound - 1.0) * 100.0, out.len() as f64 - bound, mb / enc, mb / dec);
}
