#!/usr/bin/env python3
"""Whole-process decode timings against zstd, two cbloom binaries alternating.

    python3 tools/ab_decode.py DIR OLD_CBLOOM NEW_CBLOOM [RUNS]

DIR holds the files of docs/BENCHMARKS.md ("Coder speed"):
enc.cbf (type 1), static.cbf (type 4), bits.zst3 and bits.zst19 (the
array's bytes through zstd -3 and -19). Every command writes to standard
output, redirected to /dev/null; each round runs every command once, in
order, and the medians over RUNS rounds (default 9) are printed.
"""
import statistics
import subprocess
import sys
import time


def main():
    d, old, new = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 9
    cmds = {
        "old t4 --bits-only": f"{old} decode static.cbf --bits-only -o -",
        "new t4 --bits-only": f"{new} decode static.cbf --bits-only -o -",
        "old t1 --bits-only": f"{old} decode enc.cbf --bits-only -o -",
        "new t1 --bits-only": f"{new} decode enc.cbf --bits-only -o -",
        "zstd -d -T1 (bits at -3)": "zstd -d -T1 -q -c bits.zst3",
        "old t1 -> raw frame": f"{old} decode enc.cbf -o -",
        "new t1 -> raw frame": f"{new} decode enc.cbf -o -",
        "old t4 -> raw frame": f"{old} decode static.cbf -o -",
        "new t4 -> raw frame": f"{new} decode static.cbf -o -",
        "zstd -d -T1 (bits at -19)": "zstd -d -T1 -q -c bits.zst19",
    }
    times = {k: [] for k in cmds}
    for _ in range(runs):
        for k, c in cmds.items():
            t = time.perf_counter()
            subprocess.run(c + " > /dev/null 2>&1", shell=True, cwd=d, check=True)
            times[k].append(time.perf_counter() - t)
    for k in cmds:
        print(f"{k:28s} median {statistics.median(times[k]) * 1e3:6.1f} ms"
              f"  min {min(times[k]) * 1e3:6.1f}")


if __name__ == "__main__":
    main()
