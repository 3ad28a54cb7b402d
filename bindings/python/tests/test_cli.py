"""Frames written from Python read by the cbloom CLI, and frames written by
the CLI read from Python: the same bytes for the same filter, both ways."""

from __future__ import annotations

import json
import pathlib
import subprocess

import compressed_bloom as cb
import pytest

from conftest import keys

KEYS = keys(1, 2000)
OTHERS = [b"other-%d" % i for i in range(2000)]


def run(cbloom: str, *args: str) -> str:
    r = subprocess.run([cbloom, *args], capture_output=True, text=True)
    assert r.returncode == 0, f"cbloom {' '.join(args)}: {r.stderr}"
    return r.stdout


def write_keys(path: pathlib.Path, ks: list[bytes]) -> str:
    path.write_bytes(b"".join(k + b"\n" for k in ks))
    return str(path)


def cli_answers(cbloom: str, frame: pathlib.Path, ks: list[bytes], tmp: pathlib.Path) -> list[bool]:
    """What `cbloom query --json` answers for each key (exit 1 means some
    key is absent, which is an answer, not an error)."""
    r = subprocess.run([cbloom, "query", "--json", str(frame), "--keys",
                        write_keys(tmp / "queries.txt", ks)], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    return [json.loads(line)["present"] for line in r.stdout.splitlines()]


# (cbloom build flags, the same filter built in Python)
CASES = {
    "standard": (["--m", "30000", "--k", "3", "--seed", "5"],
                 lambda: cb.BloomFilter(30000, 3, 5)),
    "partitioned": (["--type", "partitioned", "--m", "30000", "--k", "3", "--seed", "5"],
                    lambda: cb.PartitionedBloomFilter(30000, 3, 5)),
    "counting": (["--type", "counting", "--m", "30000", "--k", "3", "--seed", "5"],
                 lambda: cb.CountingBloomFilter(30000, 3, 5)),
    "scalable": (["--type", "scalable", "--fpr", "0.01", "--initial-capacity", "300",
                  "--seed", "5"], lambda: cb.ScalableBloomFilter(300, 0.01, 5)),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_cli_frames_read_in_python_and_rebuilt_byte_for_byte(cbloom, tmp_path, kind):
    flags, make = CASES[kind]
    out = tmp_path / "f.cbf"
    run(cbloom, "build", "--keys", write_keys(tmp_path / "k.txt", KEYS), *flags, "-o", str(out))
    frame = out.read_bytes()
    f = cb.decode(frame)
    assert f.kind == kind
    assert all(k in f for k in KEYS)
    mine = make()
    mine.update(KEYS)
    # The same declared count too (a scalable filter does not count a key
    # its layers already answer yes for).
    assert mine == f and len(mine) == len(f)
    assert mine.encode() == frame


def test_cli_sparse_and_ribbon_read_in_python(cbloom, tmp_path):
    ks = write_keys(tmp_path / "k.txt", KEYS)
    run(cbloom, "build", "--keys", ks, "--type", "sparse", "--m", "1e9", "--k", "2",
        "--seed", "9", "-o", str(tmp_path / "s.cbf"))
    s = cb.SparseFilter.decode((tmp_path / "s.cbf").read_bytes())
    assert s == cb.SparseFilter(KEYS, 10**9, 2, 9)
    assert s.encode() == (tmp_path / "s.cbf").read_bytes()
    for fast in (False, True):
        run(cbloom, "build", "--keys", ks, "--type", "ribbon", "--fpr", "0.01", "--seed", "9",
            *(["--fast"] if fast else []), "-o", str(tmp_path / "r.cbf"))
        frame = (tmp_path / "r.cbf").read_bytes()
        r = cb.RibbonFilter.decode(frame)
        assert r == cb.RibbonFilter(KEYS, 0.01, 9, fast=fast)
        assert r.encode() == frame


def python_filters() -> dict[str, object]:
    out: dict[str, object] = {}
    for name, (_, make) in CASES.items():
        f = make()
        f.update(KEYS)  # type: ignore[attr-defined]
        out[name] = f
    out["sparse"] = cb.SparseFilter(KEYS, 1 << 40, 1, 3)
    out["ribbon"] = cb.RibbonFilter(KEYS, 0.001, 3)
    return out


@pytest.mark.parametrize("kind", ["standard", "partitioned", "counting", "scalable",
                                  "sparse", "ribbon"])
def test_python_frames_read_by_the_cli(cbloom, tmp_path, kind):
    f = python_filters()[kind]
    path = tmp_path / "f.cbf"
    path.write_bytes(f.encode())  # type: ignore[attr-defined]
    info = json.loads(run(cbloom, "inspect", "--json", str(path)))
    assert info["kind"] == kind
    queries = KEYS[:300] + OTHERS[:300]
    assert cli_answers(cbloom, path, queries, tmp_path) == [q in f for q in queries]  # type: ignore[operator]


def test_python_bits_decoded_by_the_cli(cbloom, tmp_path):
    f = cb.BloomFilter(100_000, 2, 1)
    f.update(KEYS)
    for coding in ("auto", "adaptive", "static", "raw"):
        (tmp_path / "f.cbf").write_bytes(f.encode(coding))
        run(cbloom, "decode", "--bits-only", str(tmp_path / "f.cbf"), "-o", str(tmp_path / "b"))
        assert (tmp_path / "b").read_bytes() == f.to_bytes(), coding


def test_deltas_cross_between_python_and_the_cli(cbloom, tmp_path):
    old = cb.BloomFilter(50_000, 2, 7)
    old.update(KEYS)
    new = cb.BloomFilter(50_000, 2, 7)
    new.update(keys(101, 2100))
    (tmp_path / "old.cbf").write_bytes(old.encode())
    (tmp_path / "new.cbf").write_bytes(new.encode())
    # Python's delta applied by the CLI.
    (tmp_path / "d.cbf").write_bytes(cb.delta(old, new))
    run(cbloom, "apply", str(tmp_path / "old.cbf"), str(tmp_path / "d.cbf"), "-o",
        str(tmp_path / "out.cbf"))
    assert cb.decode((tmp_path / "out.cbf").read_bytes()) == new
    # The CLI's delta applied from Python: the same bytes as Python's.
    run(cbloom, "delta", str(tmp_path / "old.cbf"), str(tmp_path / "new.cbf"), "-o",
        str(tmp_path / "d2.cbf"))
    d2 = (tmp_path / "d2.cbf").read_bytes()
    assert d2 == cb.delta(old, new)
    mine = old.copy()
    mine.apply(d2)
    assert mine == new


def test_squid_digests_cross_between_python_and_the_cli(cbloom, tmp_path):
    d = cb.SquidDigest(1000, 5)
    d.update([b"http://example.com/%d" % i for i in range(600)])
    (tmp_path / "d.cbf").write_bytes(d.encode())
    run(cbloom, "export", "--squid", str(tmp_path / "d.cbf"), "-o", str(tmp_path / "d.digest"))
    assert (tmp_path / "d.digest").read_bytes() == d.to_squid_bytes()
    run(cbloom, "import", "--squid", str(tmp_path / "d.digest"), "-o", str(tmp_path / "e.cbf"))
    assert (tmp_path / "e.cbf").read_bytes() == d.encode()
    assert cb.decode((tmp_path / "e.cbf").read_bytes()) == d
