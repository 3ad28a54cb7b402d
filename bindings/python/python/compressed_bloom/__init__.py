"""Bloom-type membership filters for the wire.

Compressed frames, deltas and publisher/subscriber sync, byte-compatible with
the ``compressed_bloom`` Rust crate and the ``cbloom`` command-line tool::

    import compressed_bloom as cb

    p = cb.plan(100_000, fpr=0.001, needs="deltas")  # the kind and its m, k
    f = p.build(b"key-%d" % i for i in range(100_000))
    frame = f.encode()                                # bytes, for the wire
    g = cb.decode(frame)                              # the kind the header declares
    assert b"key-7" in g and g == f

Keys are ``bytes`` or ``str`` (UTF-8); anything that takes bytes also takes
``bytearray`` and ``memoryview``. Errors are subclasses of ``cb.Error``.
"""

from __future__ import annotations

from ._errors import (
    BuildError,
    DecodeError,
    Error,
    GapError,
    LimitError,
    NeedFullError,
    PlanError,
    StaleError,
    SyncError,
    UnorderedError,
    WrongBaseError,
    WrongKindError,
    WrongStreamError,
)
from ._native import (
    BloomFilter,
    CountingBloomFilter,
    FrameInfo,
    Limits,
    PartitionedBloomFilter,
    Plan,
    Publisher,
    RibbonFilter,
    ScalableBloomFilter,
    SparseFilter,
    SquidDigest,
    Subscriber,
    Update,
    decode,
    delta,
    inspect,
    plan,
)

__all__ = [
    "BloomFilter",
    "BuildError",
    "CountingBloomFilter",
    "DecodeError",
    "Error",
    "FrameInfo",
    "GapError",
    "LimitError",
    "Limits",
    "NeedFullError",
    "PartitionedBloomFilter",
    "Plan",
    "PlanError",
    "Publisher",
    "RibbonFilter",
    "ScalableBloomFilter",
    "SparseFilter",
    "SquidDigest",
    "StaleError",
    "Subscriber",
    "SyncError",
    "UnorderedError",
    "Update",
    "WrongBaseError",
    "WrongKindError",
    "WrongStreamError",
    "decode",
    "delta",
    "inspect",
    "plan",
]

_UNLIMITED = Limits.unlimited()


def _from_frame(frame: bytes):  # type: ignore[no-untyped-def]
    """Rebuilds a pickled filter from its frame. Unpickling runs whatever the
    pickle says, so it is trusted input: no limits beyond the format's."""
    return decode(frame, limits=_UNLIMITED)
