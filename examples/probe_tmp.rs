use std::os::unix::fs::FileExt;
use std::time::Instant;
fn par_read(path: &str, parts: usize) -> Vec<u8> {
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let mut buf = vec![0u8; len];
    let chunk = len.div_ceil(parts);
    std::thread::scope(|s| {
        for (i, piece) in buf.chunks_mut(chunk).enumerate() {
            let f = &f;
            s.spawn(move || f.read_exact_at(piece, (i * chunk) as u64).unwrap());
        }
    });
    buf
}
fn main() {
    let which = std::env::args().nth(1).unwrap();
    let t = Instant::now();
    let data = if which == "std" {
        std::fs::read("/tmp/wp/static.cbf").unwrap()
    } else {
        par_read("/tmp/wp/static.cbf", which.parse().unwrap())
    };
    let a = t.elapsed();
    println!("{which} read {:?} {}", a, data.len());
}
