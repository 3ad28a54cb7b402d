#!/usr/bin/env python3
"""Writes tests/vectors/hash_positions.txt from the specification in
docs/FORMAT.md ("Hashing"), using the reference XXH3 C library through the
`xxhash` Python package, independently of the Rust code under test.

    pip install xxhash && python3 tools/gen_hash_vectors.py > tests/vectors/hash_positions.txt
"""
import xxhash

MASK = (1 << 64) - 1


def positions(key: bytes, seed: int, m: int, k: int):
    h = xxhash.xxh3_128_intdigest(key, seed=seed)
    h1, h2 = h & MASK, h >> 64  # low64, high64 of XXH128_hash_t
    out = []
    for i in range(k):
        g = (h1 + i * h2 + (i ** 3 - i) // 6) & MASK
        out.append((g * m) >> 64)
    return h1, h2, out


KEYS = [b"", b"a", b"hello world", bytes(range(256)), b"\x00" * 17,
        b"https://example.com/index.html", bytes([0xff]) * 1000]
SEEDS = [0, 1, 0x0123456789ABCDEF, MASK]
SHAPES = [(1, 1), (2, 3), (1000, 4), (140000, 2), ((1 << 40) + 3, 7), (1 << 56, 64)]

print(f"# xxhash {xxhash.VERSION} (XXH {xxhash.XXHASH_VERSION})")
print("# key_hex seed m k h1 h2 positions(comma-separated); key '-' is empty")
for key in KEYS:
    for seed in SEEDS:
        for m, k in SHAPES:
            h1, h2, pos = positions(key, seed, m, k)
            print(key.hex() or "-", seed, m, k, h1, h2, ",".join(map(str, pos)))
