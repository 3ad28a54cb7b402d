"""Publisher and Subscriber: ordered, identified delivery with the crate's
refusals, under drops, duplicates and reordering."""

from __future__ import annotations

import random

import compressed_bloom as cb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import keys


def published(n_updates: int, full_every: int = 4, seed: int = 0):
    """A publisher's updates over a standard filter that gains and loses
    nothing but gains keys, with the filter each update describes."""
    rng = random.Random(seed)
    f = cb.BloomFilter(40_000, 2, 3)
    pub = cb.Publisher(f, stream=9, epoch=5, full_every=full_every)
    out = []
    for i in range(n_updates):
        f.update(b"k-%d-%d" % (i, j) for j in range(rng.randrange(0, 40)))
        u = pub.publish()
        out.append((u, f.copy()))
    return pub, out


def test_in_order_delivery_takes_every_frame():
    pub, updates = published(12)
    sub = cb.Subscriber()
    kinds = []
    for u, version in updates:
        kinds.append(sub.receive(u.frame))
        assert sub.filter == version and sub.version == u.identity
        assert sub.digest == version.digest
    assert kinds[0] == "full" and "delta" in kinds
    assert [u.kind for u, _ in updates] == kinds
    assert [u.identity for u, _ in updates] == [(9, 5, s) for s in range(12)]
    assert updates[4][0].is_full  # full_every=4: seq 4 and 8 are full


@given(st.lists(st.integers(min_value=0, max_value=11), max_size=30))
def test_any_delivery_order_never_diverges(order):
    """Frames delivered in any order, with drops and duplicates: every frame
    is taken or refused with a SyncError, the subscriber holds exactly the
    version it last took, its version never goes back, and a full frame
    from the publisher brings it up to date."""
    pub, updates = published(12)
    sub = cb.Subscriber(cb.BloomFilter)
    held = None
    for i in order:
        u, version = updates[i]
        try:
            sub.receive(u.frame)
        except cb.SyncError as e:
            assert isinstance(e, (cb.GapError, cb.StaleError)), repr(e)
        else:
            assert held is None or u.identity > held
            held = u.identity
        assert sub.version == held
        if held is not None:
            assert sub.filter == updates[held[2]][1]
    last = pub.full_frame()
    assert last is not None and last.is_full
    try:
        assert sub.receive(last.frame) == "full"
    except cb.StaleError:
        assert held == last.identity
    assert sub.filter == updates[-1][1]


def test_refusals():
    pub, updates = published(6, full_every=100)
    frames = [u.frame for u, _ in updates]
    # A delta before any full frame, then a missed delta: gaps.
    sub = cb.Subscriber()
    with pytest.raises(cb.GapError):
        sub.receive(frames[1])
    sub.receive(frames[0])
    with pytest.raises(cb.GapError) as gap:
        sub.receive(frames[2])
    assert isinstance(gap.value, cb.NeedFullError) and gap.value.detail
    # A duplicate and a late frame: stale.
    sub.receive(frames[1])
    with pytest.raises(cb.StaleError) as stale:
        sub.receive(frames[1])
    assert stale.value.held == (9, 5, 1) and stale.value.got == (9, 5, 1)
    with pytest.raises(cb.StaleError):
        sub.receive(frames[0])
    # Another stream.
    other = cb.Publisher(cb.BloomFilter(40_000, 2, 3), stream=10, epoch=99)
    with pytest.raises(cb.WrongStreamError) as ws:
        sub.receive(other.publish().frame)
    assert (ws.value.expected, ws.value.found) == (9, 10)
    # A frame without identity once identified versions are held.
    with pytest.raises(cb.UnorderedError):
        sub.receive(updates[1][1].encode())
    # The state is unchanged by every refusal.
    assert sub.version == (9, 5, 1) and sub.filter == updates[1][1]


def test_a_delta_for_another_base_is_refused():
    a = cb.BloomFilter(40_000, 2, 3)
    a.update(keys(1, 2000))
    b = cb.BloomFilter(40_000, 2, 3)
    b.update(keys(2, 2001))
    pa = cb.Publisher(a, stream=1, epoch=1, full_every=100)
    pb = cb.Publisher(b, stream=1, epoch=1, full_every=100)
    sub = cb.Subscriber()
    sub.receive(pa.publish().frame)
    pb.publish()
    b.add(b"more")
    d = pb.publish()
    assert d.kind == "delta"
    with pytest.raises(cb.WrongBaseError) as e:
        sub.receive(d.frame)
    assert isinstance(e.value, cb.NeedFullError) and isinstance(e.value, cb.DecodeError)
    # Applied directly, the same refusal.
    with pytest.raises(cb.WrongBaseError):
        a.copy().apply(d.frame)


def test_a_typed_subscriber_refuses_other_kinds():
    sub = cb.Subscriber("ribbon")
    f = cb.BloomFilter(1000, 2)
    with pytest.raises(cb.WrongKindError) as e:
        sub.receive(cb.Publisher(f).publish().frame)
    assert isinstance(e.value, cb.SyncError) and isinstance(e.value, cb.DecodeError)
    assert (e.value.found, e.value.expected) == ("standard", "ribbon")
    assert sub.filter is None and sub.kind == "ribbon"
    with pytest.raises(ValueError, match="kind"):
        cb.Subscriber("cuckoo")
    with pytest.raises(TypeError, match="kind"):
        cb.Subscriber(3)


@pytest.mark.parametrize("kind", ["partitioned", "counting", "scalable", "squid"])
def test_every_kind_publishes_deltas(kind):
    f = {
        "partitioned": lambda: cb.PartitionedBloomFilter(30_000, 3),
        "counting": lambda: cb.CountingBloomFilter(30_000, 3),
        "scalable": lambda: cb.ScalableBloomFilter(200, 0.01),
        "squid": lambda: cb.SquidDigest(2000),
    }[kind]()
    f.update(keys(1, 1000))
    pub = cb.Publisher(f, full_every=100)
    sub = cb.Subscriber(kind)
    assert sub.receive(pub.publish().frame) == "full"
    f.update(keys(1001, 1100))
    if kind == "counting":
        for k in keys(1, 50):
            assert f.remove(k)
    u = pub.publish()
    assert u.kind == "delta"
    assert sub.receive(u.frame) == "delta"
    assert sub.filter == f and type(sub.filter) is type(f)


def test_kinds_built_whole_change_by_replacing_the_filter():
    pub = cb.Publisher(cb.RibbonFilter(keys(1, 500), 0.01), full_every=100)
    sub = cb.Subscriber(cb.RibbonFilter)
    sub.receive(pub.publish().frame)
    pub.filter = cb.RibbonFilter(keys(1, 600), 0.01)
    u = pub.publish()
    assert u.is_full  # the ribbon kind has no delta
    assert sub.receive(u.frame) == "full" and sub.filter == pub.filter
    s = cb.SparseFilter(keys(1, 500), 1 << 30, 2)
    pub = cb.Publisher(s, full_every=100)
    sub = cb.Subscriber()
    sub.receive(pub.publish().frame)
    pub.filter = cb.SparseFilter(keys(1, 520), 1 << 30, 2)
    u = pub.publish()
    assert u.kind == "delta" and sub.receive(u.frame) == "delta"
    assert sub.filter == pub.filter


def test_publisher_arguments():
    f = cb.BloomFilter(1000, 2)
    with pytest.raises(ValueError, match="full_every"):
        cb.Publisher(f, full_every=0)
    with pytest.raises(ValueError, match="coding"):
        cb.Publisher(cb.SparseFilter([b"a"], 1000, 2), coding="raw")
    with pytest.raises(TypeError, match="filter"):
        cb.Publisher(b"not a filter")
    pub = cb.Publisher(f, stream=4, epoch=7, coding="raw")
    assert pub.full_frame() is None and pub.next_identity == (4, 7, 0)
    u = pub.publish()
    assert cb.inspect(u.frame).frame_type == "raw" and pub.full_frame().frame == u.frame


def test_subscriber_limits():
    big = cb.BloomFilter(1 << 20, 2)
    frame = cb.Publisher(big).publish().frame
    with pytest.raises(cb.LimitError):
        cb.Subscriber(max_bytes=1000).receive(frame)
    with pytest.raises(cb.LimitError):
        cb.Subscriber(limits=cb.Limits(max_m=1000)).receive(frame)
    assert cb.Subscriber().receive(frame) == "full"
