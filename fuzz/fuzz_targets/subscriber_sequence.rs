//! A `Subscriber` driven by arbitrary sequences of a real `Publisher`'s
//! frames: delivered, dropped, reordered, replayed, truncated and mutated.
//! After every frame the subscriber either took it and holds exactly one
//! of the states the publisher published, or refused it and holds what it
//! held before.
#![no_main]

use compressed_bloom::sync::{Publisher, Subscriber};
use compressed_bloom::PublisherOptions;
use compressed_bloom::{BloomFilter, DecodeLimits, FilterParams, UpdateId};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let params = FilterParams::new(4_096, 3, 7);
    let mut publisher = Publisher::counting(
        params,
        PublisherOptions {
            full_every: 4,
            stream: 1,
            epoch: Some(10),
            ..PublisherOptions::default()
        },
    )
    .unwrap();
    let mut subscriber = Subscriber::<BloomFilter>::new(DecodeLimits::default());
    let mut published: Vec<(UpdateId, BloomFilter)> = Vec::new();
    let mut frames: Vec<Vec<u8>> = Vec::new();
    let mut bytes = data.iter().copied();
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        let frame = match op % 8 {
            0 | 1 => {
                publisher.insert(&[arg, op]);
                continue;
            }
            2 => {
                publisher.remove(&[arg, arg.wrapping_sub(2)]);
                continue;
            }
            3 | 4 => {
                let u = publisher.publish();
                published.push((u.id, publisher.current()));
                frames.push(u.frame.clone());
                if op % 8 == 4 {
                    continue; // dropped on the way
                }
                u.frame
            }
            5 => match frames.get(usize::from(arg) % frames.len().max(1)) {
                Some(f) => f.clone(), // replayed or out of order
                None => continue,
            },
            6 => match frames.last() {
                // A flipped bit somewhere in the last frame.
                Some(f) => {
                    let mut f = f.clone();
                    let at = (usize::from(arg) * 131 + usize::from(op)) % (f.len() * 8);
                    f[at / 8] ^= 1 << (at % 8);
                    f
                }
                None => continue,
            },
            _ => match frames.last() {
                Some(f) => f[..usize::from(arg) % f.len()].to_vec(), // truncated
                None => continue,
            },
        };
        let before = (subscriber.filter().cloned(), subscriber.version());
        match subscriber.receive(&frame) {
            Ok(_) => {
                let held = subscriber.filter().expect("a taken frame leaves a filter");
                let id = subscriber
                    .version()
                    .expect("publisher frames carry identities");
                let sent = published
                    .iter()
                    .find(|(pid, _)| *pid == id)
                    .expect("the held version was published");
                assert_eq!(held, &sent.1, "held state differs from published {id:?}");
            }
            Err(_) => {
                let after = (subscriber.filter().cloned(), subscriber.version());
                assert_eq!(before, after, "a refused frame changed the state");
            }
        }
    }
});
