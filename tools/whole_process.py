#!/usr/bin/env python3
"""Whole-process encode and decode of the 17.5 MB filter against zstd, with
cbloom's default options (no coding flag: `auto`).

    python3 tools/whole_process.py CBLOOM [RUNS] [DIR]

Builds, in DIR (default: a temporary folder), the filter of 10^7 keys
`key-0` .. `key-9999999` with m = 1.4e8 and k = 2 by `cbloom build` with no
coding flag, its packed bits, the bits through `zstd -3`, and its raw frame.
Then each round runs, in order, with standard output to /dev/null:

  decode: cbloom decode f.cbf --bits-only -o -    against  zstd -d -T1 -c bits.zst3
  encode: cbloom encode raw.cbf -o -              against  zstd -3 -T1 -c bits.bin

and prints the medians over RUNS rounds (default 9) and the two ratios, as
a markdown table. To see the portable decoder on a machine with AVX-512,
pass a binary built without the `simd` feature:
`cargo build --release --no-default-features --features cli`.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, cwd):
    subprocess.run(cmd, shell=True, cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    cbloom = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    d = sys.argv[3] if len(sys.argv) > 3 else tempfile.mkdtemp(prefix="cbloom-wp-")
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(os.path.join(d, "f.cbf")):
        with open(os.path.join(d, "keys.txt"), "w") as f:
            f.writelines(f"key-{i}\n" for i in range(10_000_000))
        run(f"{cbloom} build --keys keys.txt --m 1.4e8 --k 2 -o f.cbf", d)
        run(f"{cbloom} decode f.cbf --bits-only -o bits.bin", d)
        run("zstd -3 -T1 -q -f bits.bin -o bits.zst3", d)
        run(f"{cbloom} encode f.cbf --coding raw -o raw.cbf", d)
    with open(os.path.join(d, "f.cbf"), "rb") as f:
        head = f.read(4)
    types = {0: "raw", 1: "adaptive (type 1)", 4: "static (type 4)"}
    cmds = {
        "cbloom decode --bits-only": f"{cbloom} decode f.cbf --bits-only -o -",
        "zstd -d -T1": "zstd -d -T1 -q -c bits.zst3",
        "cbloom encode": f"{cbloom} encode raw.cbf -o -",
        "zstd -3 -T1": "zstd -3 -T1 -q -c bits.bin",
    }
    times = {k: [] for k in cmds}
    for _ in range(runs):
        for k, c in cmds.items():
            t = time.perf_counter()
            run(c, d)
            times[k].append(time.perf_counter() - t)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    size = os.path.getsize(os.path.join(d, "f.cbf"))
    zsize = os.path.getsize(os.path.join(d, "bits.zst3"))
    print(f"default frame: {types.get(head[3], head[3])}, {size} bytes; bits through zstd -3: {zsize} bytes")
    print(f"medians of {runs} rounds, in {d}")
    print()
    print("| command | median ms | ratio to zstd |")
    print("|---|---|---|")
    print(f"| cbloom decode --bits-only | {med['cbloom decode --bits-only']:.1f} | "
          f"{med['cbloom decode --bits-only'] / med['zstd -d -T1']:.2f}× `zstd -d` |")
    print(f"| zstd -d -T1 | {med['zstd -d -T1']:.1f} | |")
    print(f"| cbloom encode | {med['cbloom encode']:.1f} | "
          f"{med['cbloom encode'] / med['zstd -3 -T1']:.2f}× `zstd -3` |")
    print(f"| zstd -3 -T1 | {med['zstd -3 -T1']:.1f} | |")


if __name__ == "__main__":
    main()
