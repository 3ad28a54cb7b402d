"""Truncated, corrupt, hostile and oversized frames: the crate's refusals as
Python exceptions, under the default limits and with max_bytes or Limits.
No input may crash the interpreter or raise anything but the documented
exceptions."""

from __future__ import annotations

import compressed_bloom as cb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import keys, vector


def crc32c(data: bytes) -> int:
    """CRC-32C from its definition (docs/FORMAT.md), independent of the crate."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def varint(v: int) -> bytes:
    out = bytearray()
    while True:
        byte, v = v & 0x7F, v >> 7
        out.append(byte | (0x80 if v else 0))
        if not v:
            return bytes(out)


def craft(ty: int, seed: int, m: int, k: int, n: int, payload: bytes) -> bytes:
    """A version-1 frame (version 2 for type 3) with these header fields and
    a correct CRC: magic, version, type, hash scheme 1, flags 0, then the
    varints seed, m, k, n, payload length (as tests/hostile/frames.rs)."""
    f = bytes([0xCB, 0xF1, 2 if ty == 3 else 1, ty, 1, 0])
    f += b"".join(varint(v) for v in (seed, m, k, n, len(payload))) + payload
    return f + crc32c(f).to_bytes(4, "little")


def test_crc_definition():
    assert crc32c(b"123456789") == 0xE3069283


def small_frames() -> list[bytes]:
    f = cb.BloomFilter(3000, 2, 1)
    f.update(keys(1, 200))
    return [f.encode(), f.encode("raw"), vector("v3_sparse_dense.cbf"),
            vector("ribbon_small.cbf"), vector("v3_counting_coded.cbf"),
            vector("v3_scalable_base.cbf"), vector("v3_squid.cbf")]


def test_every_truncation_is_refused_as_truncated():
    for frame in small_frames():
        for cut in range(len(frame)):
            with pytest.raises(cb.DecodeError) as e:
                cb.decode(frame[:cut])
            assert e.value.reason == "truncated"
            assert e.value.available == cut and e.value.needed > cut


def test_every_bit_flip_is_refused():
    for frame in small_frames()[:3]:
        for bit in range(len(frame) * 8):
            bad = bytearray(frame)
            bad[bit // 8] ^= 1 << (bit % 8)
            with pytest.raises(cb.DecodeError):
                cb.decode(bad)


def test_each_refusal_names_itself():
    frame = small_frames()[0]
    cases = {
        "bad_magic": b"\x00\x00" + frame[2:],
        "checksum_mismatch": frame[:-1] + bytes([frame[-1] ^ 1]),
        "unsupported_version": craft(1, 0, 100, 2, 0, b"\0" * 13)[:2] + b"\x09"
        + craft(1, 0, 100, 2, 0, b"\0" * 13)[3:],
    }
    for reason, data in cases.items():
        with pytest.raises(cb.DecodeError) as e:
            cb.decode(data)
        assert e.value.reason == reason, (reason, e.value)
    with pytest.raises(cb.DecodeError) as e:
        cb.decode(frame + b"\0")
    assert e.value.reason == "trailing_bytes" and e.value.offset == len(frame)
    # A header field out of range carries the byte it is at.
    with pytest.raises(cb.DecodeError) as e:
        cb.decode(craft(0, 0, 100, 0, 0, b"\0" * 13))
    assert e.value.offset is not None and e.value.offset > 0
    # A delta where a full frame is expected, and the reverse.
    old, new = cb.BloomFilter(3000, 2), cb.BloomFilter(3000, 2)
    new.update(keys(1, 100))
    with pytest.raises(cb.DecodeError) as e:
        cb.decode(cb.delta(old, new))
    assert e.value.reason == "wrong_frame_type"
    with pytest.raises(cb.DecodeError):
        old.apply(new.encode())
    assert old == cb.BloomFilter(3000, 2)


def test_a_frame_of_another_kind():
    with pytest.raises(cb.WrongKindError) as e:
        cb.RibbonFilter.decode(small_frames()[0])
    assert (e.value.found, e.value.expected) == ("standard", "ribbon")
    with pytest.raises(cb.DecodeError):
        cb.SquidDigest.decode(small_frames()[0])  # a standard frame without Squid's header
    f = cb.BloomFilter(3000, 2)
    with pytest.raises(TypeError, match="same kind"):
        cb.delta(f, cb.CountingBloomFilter(3000, 2))
    with pytest.raises(ValueError, match="no delta"):
        cb.delta(f, cb.BloomFilter(3001, 2))
    with pytest.raises(ValueError, match="no delta"):
        r = cb.RibbonFilter([b"a"], 0.01)
        cb.delta(r, r)
    with pytest.raises(ValueError, match="identity"):
        cb.delta(f, f, identity=(1, 1, 0))


def test_huge_declared_sizes_are_refused_before_allocation():
    # m = 2^60 bits: past the limits (or the format) whatever the limits.
    for limits in (None, cb.Limits.unlimited()):
        with pytest.raises(cb.DecodeError) as e:
            cb.decode(craft(1, 0, 1 << 60, 2, 10, b"\0" * 8), limits=limits)
        assert isinstance(e.value, cb.LimitError) or e.value.reason == "invalid_field"
    # m = 2^33 bits (1 GiB) from a 30-byte frame: past the default max_m.
    with pytest.raises(cb.LimitError) as e:
        cb.decode(craft(1, 0, 1 << 33, 2, 10, b"\0" * 8))
    assert e.value.requested == 1 << 33 and e.value.limit == 1 << 32


def test_max_bytes_and_limits_tighten_the_defaults():
    f = cb.BloomFilter(1 << 20, 2)
    f.update(keys(1, 1000))
    frame = f.encode()
    assert cb.decode(frame) == f
    with pytest.raises(cb.LimitError) as e:
        cb.decode(frame, max_bytes=1000)
    assert (e.value.requested, e.value.limit) == (1 << 20, 8000)
    assert "m" in e.value.what
    assert cb.decode(frame, max_bytes=(1 << 20) // 8) == f
    for limits in (cb.Limits(max_frame_len=100), cb.Limits(max_k=1),
                   cb.Limits(max_bytes=1000), cb.Limits(max_expansion=2, expansion_floor=0)):
        with pytest.raises(cb.LimitError):
            cb.decode(frame, limits=limits)
        with pytest.raises(cb.LimitError):
            cb.BloomFilter.decode(frame, limits=limits)
        with pytest.raises(cb.LimitError):
            cb.inspect(frame, limits=limits)
    # A kind outside Limits.kinds is refused at its kind byte (version-3
    # frames carry one).
    with pytest.raises(cb.DecodeError) as e:
        cb.decode(vector("v3_sparse_dense.cbf"), limits=cb.Limits(kinds=["ribbon"]))
    assert e.value.reason == "unsupported_kind"
    with pytest.raises(ValueError, match="kinds"):
        cb.Limits(kinds=["bogus"])
    assert cb.Limits(kinds=["ribbon", "sparse"]).kinds == ["sparse", "ribbon"]
    # A delta's limits too.
    new = f.copy()
    new.update(keys(1001, 1100))
    d = cb.delta(f, new)
    with pytest.raises(cb.LimitError):
        f.copy().apply(d, max_bytes=1000)
    g = f.copy()
    g.apply(d)
    assert g == new


def test_squid_bytes_refused():
    digest = vector("squid_500x5.digest")
    with pytest.raises(cb.DecodeError):
        cb.SquidDigest.from_squid_bytes(digest[:100])
    with pytest.raises(cb.LimitError):
        cb.SquidDigest.from_squid_bytes(digest, max_bytes=10)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash(data):
    for read in (cb.decode, cb.inspect, cb.SparseFilter.decode, cb.RibbonFilter.decode):
        try:
            read(data)
        except cb.DecodeError:
            pass


@given(st.data())
def test_corrupted_frames_with_a_valid_crc_are_refused_or_read(data):
    """Changes behind a fixed-up CRC reach the payload decoders: each is
    refused with a DecodeError or read as some filter, never anything else."""
    frames = small_frames()
    frame = bytearray(data.draw(st.sampled_from(frames)))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(frame) - 5))
        frame[i] = data.draw(st.integers(0, 255))
    frame[-4:] = crc32c(bytes(frame[:-4])).to_bytes(4, "little")
    try:
        f = cb.decode(bytes(frame), max_bytes=1 << 20)
    except cb.DecodeError:
        return
    f.encode()  # whatever was read is a filter that encodes
    b"x" in f  # noqa: B015
