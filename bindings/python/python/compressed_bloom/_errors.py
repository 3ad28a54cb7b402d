"""The exceptions of compressed_bloom: one hierarchy under ``Error``.

::

    Error
    ├── DecodeError (also ValueError)      a frame was refused: .reason, .offset
    │   ├── LimitError                      past the limits: .what, .requested, .limit
    │   ├── WrongKindError (also SyncError) a frame of another kind: .found, .expected
    │   └── WrongBaseError (also NeedFullError)
    ├── SyncError                           a subscriber refused a frame's order
    │   ├── NeedFullError                   a delta it cannot apply: get a full frame
    │   │   ├── GapError                    an update was missed (or none held yet)
    │   │   └── WrongBaseError              a delta made from another filter
    │   ├── StaleError                      a duplicate, replayed or late frame: .held, .got
    │   ├── WrongKindError
    │   ├── WrongStreamError                another stream's frame: .expected, .found
    │   ├── UnorderedError                  a frame without identity after identified ones
    │   └── SignatureError (also DecodeError)  not signed by a key the receiver trusts
    │       ├── UnsignedError               no signature
    │       ├── UnknownKeyError             signed by another key: .key_id
    │       └── BadSignatureError           altered or forged: .key_id
    ├── PlanError (also ValueError)         no plan meets the target and needs
    └── BuildError                          a planned or ribbon filter could not be built

On every refusal the filter or subscriber is unchanged.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

__all__ = [
    "Error",
    "DecodeError",
    "LimitError",
    "SyncError",
    "NeedFullError",
    "GapError",
    "WrongBaseError",
    "StaleError",
    "WrongKindError",
    "WrongStreamError",
    "UnorderedError",
    "SignatureError",
    "UnsignedError",
    "UnknownKeyError",
    "BadSignatureError",
    "PlanError",
    "BuildError",
]


class Error(Exception):
    """The base of every exception compressed_bloom raises of its own."""

    def __init__(self, message: str = "", **fields: Any) -> None:
        super().__init__(message)
        for name, value in fields.items():
            setattr(self, name, value)


class DecodeError(Error, ValueError):
    """A frame was refused: truncated, corrupt, unknown, or not what was asked.

    ``reason`` names the refusal (``"truncated"``, ``"checksum_mismatch"``,
    ``"bad_magic"``, ...); ``offset`` is the frame byte the crate names, or None.
    """

    reason: str = "decode"
    offset: Optional[int] = None


class LimitError(DecodeError):
    """A frame declares more than the limits allow (``max_bytes`` or ``Limits``).

    ``what`` names the quantity, ``requested`` is the frame's value and ``limit``
    the limit in force. Raise the limits only for a sender you trust.
    """

    what: str = ""
    requested: int = 0
    limit: int = 0


class SyncError(Error):
    """A subscriber refused a frame for its place in the stream."""


class NeedFullError(SyncError):
    """A delta that does not apply to what the subscriber holds: get a full frame
    (``Publisher.full_frame()``)."""

    detail: str = ""


class GapError(NeedFullError):
    """A delta that does not follow the version held: one was missed, or no full
    frame has arrived yet."""


class WrongBaseError(NeedFullError, DecodeError):
    """A delta made from another filter (its base digest or parameters differ)."""


class StaleError(SyncError):
    """A version already held or passed: a duplicate, replay or late frame.
    Nothing to do. ``held`` and ``got`` are ``(stream, epoch, seq)``."""

    held: Tuple[int, int, int] = (0, 0, 0)
    got: Tuple[int, int, int] = (0, 0, 0)


class WrongKindError(SyncError, DecodeError):
    """A frame of another kind than the one decoded or subscribed to.
    ``found`` and ``expected`` are kind names."""

    found: str = ""
    expected: str = ""


class WrongStreamError(SyncError):
    """A frame of another stream than the one the subscriber follows."""

    expected: int = 0
    found: int = 0


class UnorderedError(SyncError):
    """A frame without an update identity, once the subscriber holds an
    identified version (it could roll the subscriber back)."""

    held: Tuple[int, int, int] = (0, 0, 0)


class SignatureError(SyncError, DecodeError):
    """A frame not signed by one of the keys the receiver trusts, refused by
    ``verify`` or by a ``Subscriber`` given ``verifying_keys`` (before the
    frame's order or payload is looked at)."""


class UnsignedError(SignatureError):
    """A frame without a signature, where only signed frames are taken."""


class UnknownKeyError(SignatureError):
    """A frame signed by a key the receiver does not hold. ``key_id`` is the
    signer's key id: the first 8 bytes of its public key."""

    key_id: bytes = b""


class BadSignatureError(SignatureError):
    """A signature that does not verify with the key the frame names: the
    frame was altered after signing, or forged. ``key_id`` as for
    ``UnknownKeyError``."""

    key_id: bytes = b""


class PlanError(Error, ValueError):
    """No filter kind meets the target and the receiver's needs."""


class BuildError(Error):
    """A planned filter, a ribbon filter or a scalable filter's next layer
    could not be built."""


# Shown (and pickled) as compressed_bloom.X, where users import them from.
for _name in __all__:
    globals()[_name].__module__ = "compressed_bloom"
del _name
