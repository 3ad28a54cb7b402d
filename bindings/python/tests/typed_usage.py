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
    secret, public = cb.generate_key()
    signed: bytes = cb.sign(frame, secret)
    signer = cb.verify(signed, [public]).signer
    assert signer == public[:8] and cb.public_key(secret) == public
    spub = cb.Publisher(h, signing_key=secret)
    spub.set_signing_key(bytearray(secret))
    ssub = cb.Subscriber(verifying_keys=[public])
    ssub.verifying_keys = [public, cb.generate_key()[1]]
    keys: list[bytes] = ssub.verifying_keys
    assert len(keys) == 2 and spub.public_key == public
    try:
        ssub.receive(frame)
    except cb.SignatureError as e:
        assert isinstance(e, cb.UnsignedError)
    try:
        cb.verify(cb.sign(frame, cb.generate_key()[0]), [public])
    except cb.UnknownKeyError as e:
        key_id: bytes = e.key_id
        assert len(key_id) == 8


if __name__ == "__main__":
    main()
