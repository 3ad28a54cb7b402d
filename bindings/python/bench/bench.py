"""Speed of the Python binding against the crate and against rbloom.

1. Decode: the 17.5 MB filter of docs/BENCHMARKS.md (m = 1.4e8, k = 2,
   10^7 keys i.to_le_bytes() with seed 1, as benches/codec.rs builds it),
   framed with the default coding (type 4). The crate's in-process time is
   compressed_bloom._native._bench_decode_ns: the crate's decode_any on the
   same frame, in the same compiled extension, timed in Rust with the GIL
   released. The Python time is compressed_bloom.decode(frame), the whole
   call (argument, decode, the Python object). Best of --repeats each.
2. Build and query against rbloom at the same n and f: 10^6 bytes keys
   added with update(), then 10^6 non-members tested with `in` (through
   map(f.__contains__, ...), the same loop for both). compressed_bloom is
   timed twice: with rbloom's m and k (the classic sizing, m = -n ln f /
   ln^2 2, k = round(m/n ln 2)), and with the planner's standard filter for
   the rate (plan(n, fpr=f, kind="standard"), sized for its compressed
   frame: more bits, fewer hash positions).

Run it through bench/run.sh, which makes a virtual environment with the
package and rbloom. `--small` runs every step on small sizes, to check the
script; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time

import compressed_bloom as cb
from compressed_bloom import _native


def best(repeats: int, fn) -> float:  # type: ignore[no-untyped-def]
    """Seconds of the fastest of `repeats` calls of fn."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def decode_bench(m: int, k: int, n: int, repeats: int) -> None:
    f = cb.BloomFilter(m, k, 1)
    chunk = 1_000_000
    for start in range(0, n, chunk):
        f.update(i.to_bytes(8, "little") for i in range(start, min(n, start + chunk)))
    frame = f.encode()
    info = cb.inspect(frame)
    assert cb.decode(frame) == f
    crate = _native._bench_decode_ns(frame, repeats) / 1e9
    python = best(repeats, lambda: cb.decode(frame))
    print(f"Decode: m = {m}, k = {k}, n = {n}: {m // 8} bytes of filter, "
          f"frame of {len(frame)} bytes (type {info.frame_type}); best of {repeats}.")
    print()
    print("| decoder | ms | ratio to the crate |")
    print("|---|---|---|")
    print(f"| crate, in process (decode_any) | {crate * 1e3:.2f} | 1.00× |")
    print(f"| Python, compressed_bloom.decode | {python * 1e3:.2f} | {python / crate:.2f}× |")
    print()


def classic(n: int, fpr: float) -> tuple[int, int]:
    """The usual sizing for n keys at rate fpr: m = -n ln f / ln^2 2 and
    k = round(m/n ln 2)."""
    m = math.ceil(-n * math.log(fpr) / math.log(2) ** 2)
    return m, max(1, round(m / n * math.log(2)))


def build_bench(n: int, fpr: float, repeats: int) -> None:
    import rbloom

    members = [b"member-%d" % i for i in range(n)]
    others = [b"other-%d" % i for i in range(n)]
    m, k = classic(n, fpr)
    p = cb.plan(n, fpr=fpr, kind="standard")

    def ours_classic() -> object:
        f = cb.BloomFilter(m, k)
        f.update(members)
        return sum(map(f.__contains__, others))

    def ours_planned() -> object:
        f = p.build(members)
        return sum(map(f.__contains__, others))

    def theirs() -> object:
        b = rbloom.Bloom(n, fpr)
        b.update(members)
        return sum(map(b.__contains__, others))

    rows = [
        (f"compressed_bloom, m = {m}, k = {k} (rbloom's sizing)", ours_classic),
        (f"compressed_bloom, plan(): m = {p.m}, k = {p.k}", ours_planned),
        ("rbloom.Bloom(n, f)", theirs),
    ]
    results = [(name, best(repeats, fn), fn()) for name, fn in rows]
    base = results[-1][1]
    print(f"Build from {n} bytes keys, then test {n} non-members, f = {fpr}; best of {repeats}.")
    print()
    print("| filter | ms | ratio to rbloom | false positives |")
    print("|---|---|---|---|")
    for name, t, false in results:
        print(f"| {name} | {t * 1e3:.1f} | {t / base:.2f}× | {false} |")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="small sizes: checks the script only")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    import rbloom  # noqa: F401  (fail early if the environment lacks it)

    from importlib.metadata import version

    print(f"Python {platform.python_version()} on {platform.machine()}, "
          f"compressed-bloom {version('compressed-bloom')}, rbloom {version('rbloom')}")
    print()
    if args.small:
        decode_bench(140_000, 2, 10_000, 2)
        build_bench(10_000, 0.01, 2)
    else:
        decode_bench(140_000_000, 2, 10_000_000, args.repeats)
        build_bench(1_000_000, 0.01, args.repeats)


if __name__ == "__main__":
    sys.exit(main())
