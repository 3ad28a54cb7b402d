//! A hostile ribbon frame (valid header and CRC, wrong length or counts)
//! is refused before the decoder allocates anything near what it declares.

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

use compressed_bloom::kinds::ribbon::RibbonFilter;
use compressed_bloom::wire::varint;
use compressed_bloom::{decode_any, AnyFilter, DecodeLimits, Subscriber};

/// The counting allocator's peak means something only while one test
/// allocates at a time.
/// What the test harness may allocate beside a running test (its output
/// for the tests that ended: up to 10,310 bytes measured), so figures
/// meant to be exact are checked within it.
const HARNESS: usize = 64 * 1024;

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn frame(m: u64, k: u64, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0xCB, 0xF1, 3, 0, 1, 0, 5];
    for v in [0, m, k, 0, payload.len() as u64] {
        varint::put(&mut f, v);
    }
    f.extend_from_slice(payload);
    let crc = crc32c::crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

#[test]
fn hostile_frames_allocate_in_proportion_to_their_length() {
    let _serial = serial();
    let lim = DecodeLimits::unlimited();
    // 2^20 blocks of 63 columns declared (1 GiB of words) behind 1 KiB.
    let mut p = vec![128, 0, 1];
    varint::put(&mut p, 128 << 20);
    p.push(0);
    p.resize(1024, 0);
    let big = frame(128 << 20, 63, &p);
    // 2^50 shards declared in a 1 KiB payload.
    let mut q = vec![128, 0];
    varint::put(&mut q, 1 << 50);
    q.resize(1024 + 5, 0);
    let shards = frame(128 * 8, 1, &q);
    for f in [&big, &shards] {
        let peak = peak_of(|| assert!(decode_any(f, &lim).is_err()));
        assert!(peak <= 64 * 1024, "peak {peak}");
    }
}

/// A payload of one 128-row shard (m = 128, r = 1, no upper blocks) and
/// `empty` shards of no rows, each the two bytes a shard takes at least:
/// the frame that makes the shard table as large as a payload can.
fn empty_shards(empty: u64) -> (Vec<u8>, u64) {
    let mut p = vec![128, 0];
    varint::put(&mut p, empty + 1);
    varint::put(&mut p, 128);
    p.push(0);
    p.resize(p.len() + 2 * empty as usize, 0);
    p.resize(p.len() + 16, 0);
    let len = p.len() as u64;
    (frame(128, 1, &p), len)
}

/// The worst ribbon frame the default limits accept: 16 bytes per payload
/// byte are counted against the 512 MiB memory limit, so a payload of
/// 2^25 − 1 bytes (a 33,554,451-byte frame) holding 16,777,204 shards of
/// no rows passes, and every entry point that decodes it (`decode_any`,
/// `decode_as`, `FrameCodec`, serde, `Subscriber`) holds at most those 16
/// bytes per payload byte; a `Subscriber` holds one encoded frame more, for
/// its digest.
#[test]
fn the_largest_shard_table_the_default_limits_accept_stays_within_them() {
    let _serial = serial();
    let lim = DecodeLimits::default();
    let (f, payload_len) = empty_shards(16_777_203);
    assert_eq!(f.len(), 33_554_451);
    let bound = payload_len * 16;
    assert!(
        bound <= lim.max_m / 8,
        "the frame is within the memory limit"
    );
    let check = |what: &str, decode: &dyn Fn() -> bool| {
        let peak = peak_of(|| assert!(decode(), "{what} decodes the frame"));
        println!("{what}: peak {peak} bytes for a {}-byte frame", f.len());
        assert!(
            peak as u64 <= bound,
            "{what}: peak {peak} bytes, the limit counts {bound}"
        );
        peak
    };
    let direct = check("decode_any", &|| decode_any(&f, &lim).is_ok());
    check("decode_as", &|| {
        compressed_bloom::decode_as::<RibbonFilter>(&f, &lim).is_ok()
    });
    #[cfg(feature = "tokio")]
    {
        use compressed_bloom::tokio_codec::FrameCodec;
        use tokio_util::codec::Decoder;
        let mut src = bytes::BytesMut::from(&f[..]);
        let checked = FrameCodec::new(lim).decode(&mut src).unwrap().unwrap();
        check("FrameCodec", &|| {
            checked.decode_as::<RibbonFilter>(&lim).is_ok()
        });
    }
    #[cfg(feature = "serde")]
    {
        // Postcard's form of the frame as serde bytes: its length, then it.
        let mut wire = Vec::new();
        varint::put(&mut wire, f.len() as u64);
        wire.extend_from_slice(&f);
        check("serde (postcard)", &|| {
            postcard::from_bytes::<RibbonFilter>(&wire).is_ok()
        });
    }
    // A subscriber also digests the filter, which for this kind hashes
    // its encoded frame: one frame more than decode_any, written in place
    // (a payload built apart and copied into the frame held two).
    let held = check("Subscriber", &|| {
        Subscriber::<AnyFilter>::new(lim).receive(&f).is_ok()
    });
    assert!(
        held <= direct + f.len() + HARNESS,
        "Subscriber: peak {held}, decode_any {direct} + the frame {}",
        f.len()
    );
}

/// One record per shard: the table of 2^20 empty shards (2 payload bytes
/// each) holds 24 bytes per shard, 12 per payload byte, at the peak.
#[test]
fn a_decoded_shard_table_holds_one_record_per_shard() {
    let _serial = serial();
    let shards = 1u64 << 20;
    let (f, _) = empty_shards(shards - 1);
    let lim = DecodeLimits::default();
    let peak = peak_of(|| drop(compressed_bloom::kinds::ribbon::decode_ribbon(&f, &lim).unwrap()));
    // 24 bytes per shard plus the one 16-byte word (two records would
    // add 16 bytes per shard, 16 MiB).
    let held = (24 * shards + 16) as usize;
    assert!(
        (held..=held + HARNESS).contains(&peak),
        "peak {peak}, one record per shard holds {held}"
    );
}

/// The solution words are allocated once, at their length: what
/// `heap_bytes` reports is what the decoder allocated.
#[test]
fn a_decoded_filter_holds_what_heap_bytes_reports() {
    let _serial = serial();
    let keys: Vec<u32> = (0..500_000).collect();
    let keys: Vec<[u8; 4]> = keys.iter().map(|k| k.to_le_bytes()).collect();
    let built = RibbonFilter::from_keys(&keys, 0.01, 9).unwrap();
    let f = compressed_bloom::kinds::ribbon::encode_ribbon(&built);
    let mut held = 0;
    let peak = peak_of(|| {
        let g =
            compressed_bloom::kinds::ribbon::decode_ribbon(&f, &DecodeLimits::default()).unwrap();
        held = g.heap_bytes();
        std::mem::forget(g);
    });
    // The words are about 440 KB here: a second allocation of them
    // would be far past the harness's slack.
    assert!(
        (held..=held + HARNESS).contains(&peak),
        "peak {peak}, heap_bytes {held}"
    );
}

/// The `ribbon_decode` fuzz target's memory assertion on its seed of
/// 20,000 empty shards (tools/fuzz_seeds.sh): at most 16 bytes per frame
/// byte plus 64 KiB.
#[test]
fn the_ribbon_decode_fuzz_seed_of_empty_shards_stays_within_its_bound() {
    let _serial = serial();
    let (f, _) = empty_shards(20_000);
    let bound = f.len() * 16 + 64 * 1024;
    let lim = DecodeLimits::default();
    let peak = peak_of(|| drop(compressed_bloom::kinds::ribbon::decode_ribbon(&f, &lim).unwrap()));
    assert!(peak <= bound, "peak {peak} for a {}-byte frame", f.len());
}
