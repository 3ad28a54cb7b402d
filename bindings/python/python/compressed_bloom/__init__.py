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

Signed frames (Ed25519) say who made a frame: ``secret, public =
cb.generate_key()``, then ``cb.sign(frame, secret)`` or
``cb.Publisher(f, signing_key=secret)``, and ``cb.verify(frame, [public])`` or
``cb.Subscriber(verifying_keys=[public])`` on the receiving side.
"""

from __future__ import annotations

import os
from typing import Tuple

from ._errors import (
    BadSignatureError,
    BuildError,
    DecodeError,
    Error,
    GapError,
    LimitError,
    NeedFullError,
    PlanError,
    SignatureError,
    StaleError,
    SyncError,
    UnknownKeyError,
    UnorderedError,
    UnsignedError,
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
    public_key,
    sign,
    verify,
)

__all__ = [
    "BadSignatureError",
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
    "SignatureError",
    "SparseFilter",
    "SquidDigest",
    "StaleError",
    "Subscriber",
    "SyncError",
    "UnknownKeyError",
    "UnorderedError",
    "UnsignedError",
    "Update",
    "WrongBaseError",
    "WrongKindError",
    "WrongStreamError",
    "decode",
    "delta",
    "generate_key",
    "inspect",
    "plan",
    "public_key",
    "sign",
    "verify",
]

_UNLIMITED = Limits.unlimited()


def _from_frame(frame: bytes):  # type: ignore[no-untyped-def]
    """Rebuilds a pickled filter from its frame. Unpickling runs whatever the
    pickle says, so it is trusted input: no limits beyond the format's."""
    return decode(frame, limits=_UNLIMITED)


def generate_key() -> Tuple[bytes, bytes]:
    """A new Ed25519 key pair for signed frames: ``(secret, public)``, 32 bytes
    each. The secret (from ``os.urandom``) signs (``sign``,
    ``Publisher(signing_key=...)``); keep it private. The public key verifies
    (``verify``, ``Subscriber(verifying_keys=...)``); its first 8 bytes are
    the key id a signed frame names (``FrameInfo.signer``)."""
    secret = os.urandom(32)
    return secret, public_key(secret)
