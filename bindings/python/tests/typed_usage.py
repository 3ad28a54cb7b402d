"""Typical use, type-checked by `mypy --strict` against the package's stubs
(test_stubs.py); also run as a script by that test."""

from __future__ import annotations

import compressed_bloom as cb


def main() -> None:
    p: cb.Plan = cb.plan(1000, fpr=0.01, needs=["deltas"])
    f = p.build([b"a", "b", bytearray(b"c"), memoryview(b"d")])
    frame: bytes = f.encode("auto")
    g = cb.decode(frame, max_bytes=1 << 20)
    assert g == f and b"a" in g and len(g) == 4
    h = cb.BloomFilter(10_000, 2)
    h.update([b"x", b"y"])
    h2 = h.copy()
    h2.add("z")
    d: bytes = cb.delta(h, h2)
    h.apply(d)
    r: cb.RibbonFilter = cb.RibbonFilter.decode(cb.RibbonFilter([b"k"], 0.01, fast=True).encode())
    assert b"k" in r
    info: cb.FrameInfo = cb.inspect(frame, limits=cb.Limits(max_bytes=1 << 20))
    assert info.identity is None
    pub = cb.Publisher(h, stream=1, epoch=2)
    sub = cb.Subscriber(cb.BloomFilter)
    u: cb.Update = pub.publish()
    what: str = sub.receive(u.frame)
    assert what == "full" and sub.version == (1, 2, 0)
    try:
        sub.receive(u.frame)
    except cb.StaleError as e:
        assert e.held == (1, 2, 0)


if __name__ == "__main__":
    main()
