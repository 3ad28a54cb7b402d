"""Each kind's round trip and its set-like surface: keys of every accepted
type, add/update/in/len, union, removal, equality, pickling, repr, and the
planner's choice and build."""

from __future__ import annotations

import copy
import pickle
import threading

import compressed_bloom as cb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import keys

KEYS = keys(1, 3000)
OTHERS = [b"other-%d" % i for i in range(3000)]
key_lists = st.lists(st.binary(max_size=40), max_size=300)


def all_kinds(ks: list[bytes]) -> list:
    """A filter of every kind holding ks."""
    standard = cb.BloomFilter(20_000, 3, 1)
    standard.update(ks)
    partitioned = cb.PartitionedBloomFilter(21_000, 3, 1)
    partitioned.update(ks)
    counting = cb.CountingBloomFilter(20_000, 3, 1)
    counting.update(ks)
    scalable = cb.ScalableBloomFilter(100, 0.01, 1)
    scalable.update(ks)
    squid = cb.SquidDigest(max(len(ks), 1), 5)
    squid.update(ks)
    return [standard, partitioned, counting, scalable,
            cb.SparseFilter(ks, 1 << 40, 2, 1), cb.RibbonFilter(ks, 0.01, 1), squid]


CODINGS = {
    "standard": ["auto", "adaptive", "static", "raw"],
    "partitioned": ["auto", "adaptive", "static", "raw"],
    "counting": ["auto", "adaptive", "raw"],
    "scalable": ["auto", "adaptive", "raw"],
    "sparse": ["auto", "adaptive"],
    "ribbon": ["auto", "raw"],
    "squid": ["auto", "adaptive", "raw"],
}


@given(key_lists)
def test_every_kind_round_trips_in_every_coding_it_has(ks):
    for f in all_kinds(ks):
        assert all(k in f for k in ks), f.kind  # no false negatives
        for coding in CODINGS[f.kind]:
            frame = f.encode(coding)
            assert cb.decode(frame) == f, (f.kind, coding)
            assert type(f).decode(frame) == f
            assert cb.inspect(frame).kind == f.kind
        for coding in {"auto", "adaptive", "static", "raw"} - set(CODINGS[f.kind]):
            with pytest.raises(ValueError, match="coding"):
                f.encode(coding)


def test_declared_count_repr_and_kind():
    for f in all_kinds(KEYS):
        n = 3000 if f.kind != "scalable" else len(f)
        assert len(f) == f.n == n
        r = repr(f)
        assert f"kind={f.kind}" in r and f"m={f.m}" in r and f"k={f.k}" in r and f"n={n}" in r
        assert "estimated_fpr=" in r


def test_pickle_copy_and_equality():
    for f in all_kinds(KEYS):
        assert pickle.loads(pickle.dumps(f)) == f
        for c in (f.copy(), copy.copy(f), copy.deepcopy(f)):
            assert c == f and c is not f
        with pytest.raises(TypeError):
            hash(f)
    a, b = cb.BloomFilter(1000, 2), cb.BloomFilter(1000, 2)
    assert a == b
    b.add(b"x")
    assert a != b
    assert cb.BloomFilter(1000, 2) != cb.BloomFilter(1000, 2, seed=1)
    assert cb.BloomFilter(1000, 2) != cb.CountingBloomFilter(1000, 2)
    assert cb.BloomFilter(1000, 2) != "a filter"


def test_keys_of_every_type_hash_alike():
    f = cb.BloomFilter(10_000, 3)
    f.add("café")
    f.add(bytearray(b"ba"))
    f.add(memoryview(b"mv"))
    f.add(memoryview(b"xxsliced")[2:])
    for k in ["café".encode(), b"ba", b"mv", b"sliced"]:
        assert k in f
        assert bytearray(k) in f and memoryview(k) in f
    assert "ba" in f and "mv" in f
    g = cb.BloomFilter(10_000, 3)
    g.update(["café", bytearray(b"ba"), memoryview(b"mv"), b"sliced"])
    assert g == f


def test_wrong_key_types_raise_type_error():
    f = cb.BloomFilter(1000, 2)
    for bad in (1, 2.5, None, object(), ["a"]):
        with pytest.raises(TypeError, match="key"):
            f.add(bad)
        with pytest.raises(TypeError, match="key"):
            bad in f  # noqa: B015
    with pytest.raises(TypeError, match="keys"):
        f.update(b"abc")  # one key, not an iterable of keys
    with pytest.raises(TypeError, match="keys"):
        f.update("abc")
    with pytest.raises(TypeError, match="keys"):
        f.update(5)
    with pytest.raises(TypeError, match="key"):
        f.update([b"a", 5])


def test_update_takes_any_iterable_and_a_million_keys():
    f = cb.BloomFilter(20_000, 3)
    f.update(b"key-%d" % i for i in range(1, 3001))
    g = cb.BloomFilter(20_000, 3)
    for k in KEYS:
        g.add(k)
    assert f == g
    big = cb.BloomFilter(10_000_000, 3)
    big.update([b"%d" % i for i in range(1_000_000)])
    assert len(big) == 1_000_000 and b"999999" in big


@pytest.mark.parametrize("make", [lambda: cb.BloomFilter(20_000, 3, 1),
                                  lambda: cb.PartitionedBloomFilter(21_000, 3, 1)])
def test_union(make):
    a, b, both = make(), make(), make()
    a.update(KEYS[:1500])
    b.update(KEYS[1500:])
    both.update(KEYS)
    assert (a | b) == both
    a |= b
    assert a == both
    a |= a
    assert a == both
    with pytest.raises(ValueError, match="other"):
        a | type(a)(21_000, 3, 2)  # another seed


def test_sparse_union():
    a = cb.SparseFilter(KEYS[:1500], 1 << 40, 2, 1)
    b = cb.SparseFilter(KEYS[1500:], 1 << 40, 2, 1)
    assert (a | b) == cb.SparseFilter(KEYS, 1 << 40, 2, 1)
    with pytest.raises(ValueError, match="other"):
        a | cb.SparseFilter(KEYS, 1 << 40, 3, 1)


def test_counting_remove():
    f = cb.CountingBloomFilter(50_000, 3)
    f.update(KEYS)
    for k in KEYS[:1000]:
        assert f.remove(k)
    g = cb.CountingBloomFilter(50_000, 3)
    g.update(KEYS[1000:])
    assert f.counters() == g.counters()
    assert f.remove(b"never added") is False
    assert f.to_bloom().count_ones() == f.count_nonzero()


def test_squid_methods():
    d = cb.SquidDigest(100)
    d.add("http://a/", method="POST")
    assert d.contains("http://a/", method="POST")
    assert "http://a/" not in d or d.contains("http://a/")  # GET: by chance only
    with pytest.raises(ValueError, match="method"):
        d.add("http://a/", method="FETCH")


def test_ribbon_builds_fast_and_compact():
    compact = cb.RibbonFilter(KEYS, 0.01, 2)
    fast = cb.RibbonFilter(KEYS, 0.01, 2, fast=True)
    assert all(k in compact and k in fast for k in KEYS)
    assert compact != fast
    for bad in (0.0, 1.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="fpr"):
            cb.RibbonFilter(KEYS, bad)


def test_bad_parameters_name_the_parameter():
    with pytest.raises(ValueError, match="^m"):
        cb.BloomFilter(0, 2)
    with pytest.raises(ValueError, match="^k"):
        cb.BloomFilter(100, 0)
    with pytest.raises(ValueError, match="^k"):
        cb.CountingBloomFilter(100, 65)
    with pytest.raises(ValueError, match="^m"):
        cb.PartitionedBloomFilter(100, 3)  # m not a multiple of k
    with pytest.raises(ValueError, match="fpr"):
        cb.ScalableBloomFilter(100, 1.5)
    with pytest.raises(ValueError, match="initial_capacity"):
        cb.ScalableBloomFilter(0, 0.01)
    with pytest.raises(OverflowError):
        cb.BloomFilter(-1, 2)
    with pytest.raises(TypeError):
        cb.BloomFilter("100", 2)


# The kinds the planner picks for each need, as the crate documents them
# (plan::recommend): a static set goes as a ribbon filter.
@pytest.mark.parametrize("needs,kinds", [
    (None, {"ribbon"}),
    ("deltas", {"standard", "partitioned", "sparse"}),
    (["union"], {"standard", "partitioned", "sparse"}),
    ("deletion", {"counting"}),
    (("growth",), {"scalable"}),
])
def test_plan_picks_a_kind_with_the_needs_and_builds_it(needs, kinds):
    p = cb.plan(3000, fpr=0.001, needs=needs)
    assert p.kind in kinds and p.lacks is None
    assert p.fpr <= 0.001 * 1.0001
    assert len(p.alternatives) == 5
    f = p.build(KEYS)
    assert f.kind == p.kind and f.planned_fpr == p.fpr
    assert "planned_fpr=" in repr(f)
    assert all(k in f for k in KEYS)
    false = sum(o in f for o in OTHERS) / len(OTHERS)
    assert false < 0.01  # 0.001 planned: 30 in 3000 is far out


def test_plan_for_a_budget_fits_it():
    for kind in ("standard", "partitioned", "counting", "sparse", "ribbon"):
        p = cb.plan(3000, max_bytes=4000, kind=kind)
        assert p.kind == kind and p.bound_bytes <= 4000
        assert len(p.build(KEYS).encode()) <= 4000


def test_plan_refusals():
    with pytest.raises(ValueError, match="fpr, max_bytes"):
        cb.plan(1000)
    with pytest.raises(ValueError, match="fpr, max_bytes"):
        cb.plan(1000, fpr=0.01, max_bytes=100)
    with pytest.raises(ValueError, match="fpr"):
        cb.plan(1000, fpr=1.5)
    with pytest.raises(ValueError, match="needs"):
        cb.plan(1000, fpr=0.01, needs="speed")
    with pytest.raises(ValueError, match="kind"):
        cb.plan(1000, fpr=0.01, kind="cuckoo")
    with pytest.raises(cb.PlanError):
        cb.plan(1000, fpr=0.01, needs=["deletion", "growth"])
    with pytest.raises(cb.PlanError, match="lacks deltas"):
        cb.plan(1000, fpr=0.01, needs="deltas", kind="ribbon")


def test_concurrent_decodes_release_the_gil_and_agree():
    f = cb.BloomFilter(8_000_000, 2)
    f.update([b"%d" % i for i in range(500_000)])
    frame = f.encode()
    assert len(frame) > 64 * 1024
    results: list = []

    def work() -> None:
        results.append(cb.decode(frame))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(r == f for r in results)


def test_frames_from_every_bytes_like_type():
    f = cb.BloomFilter(100_000, 2)
    f.update(KEYS)
    frame = f.encode()
    for data in (frame, bytearray(frame), memoryview(frame), memoryview(bytearray(frame)),
                 memoryview(b"xx" + frame)[2:]):
        assert cb.decode(data) == f
        assert cb.BloomFilter.decode(data) == f
    with pytest.raises(TypeError, match="data"):
        cb.decode("not bytes")
    with pytest.raises(TypeError, match="data"):
        cb.decode(12)
