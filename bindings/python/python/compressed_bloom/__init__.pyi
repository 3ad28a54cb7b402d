"""Type stubs of compressed_bloom (the classes live in the _native extension)."""

from typing import Any, ClassVar, Iterable, Literal, Optional, Tuple, TypeVar, Union

from ._errors import (
    BadSignatureError as BadSignatureError,
    BuildError as BuildError,
    DecodeError as DecodeError,
    Error as Error,
    GapError as GapError,
    LimitError as LimitError,
    NeedFullError as NeedFullError,
    PlanError as PlanError,
    SignatureError as SignatureError,
    StaleError as StaleError,
    SyncError as SyncError,
    UnknownKeyError as UnknownKeyError,
    UnorderedError as UnorderedError,
    UnsignedError as UnsignedError,
    WrongBaseError as WrongBaseError,
    WrongKindError as WrongKindError,
    WrongStreamError as WrongStreamError,
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

#: Anything that takes bytes: bytes, bytearray or memoryview.
Buffer = Union[bytes, bytearray, memoryview]
#: A key: bytes-like, or str (hashed as UTF-8).
Key = Union[str, bytes, bytearray, memoryview]
#: An update identity: (stream, epoch, seq).
Identity = Tuple[int, int, int]
Coding = Literal["auto", "adaptive", "static", "raw"]
KindName = Literal["standard", "partitioned", "counting", "scalable", "sparse", "ribbon", "squid"]
Need = Literal["deltas", "union", "deletion", "growth"]

_F = TypeVar("_F", bound="_Filter")

class Limits:
    """What a decoder accepts from a frame (the crate's DecodeLimits)."""

    def __init__(
        self,
        *,
        max_bytes: Optional[int] = None,
        max_m: Optional[int] = None,
        max_k: Optional[int] = None,
        max_frame_len: Optional[int] = None,
        max_expansion: Optional[int] = 4096,
        expansion_floor: Optional[int] = None,
        max_decisions_per_byte: Optional[int] = None,
        kinds: Optional[Iterable[str]] = None,
    ) -> None: ...
    @staticmethod
    def unlimited() -> Limits: ...
    @property
    def max_m(self) -> int: ...
    @property
    def max_k(self) -> int: ...
    @property
    def max_frame_len(self) -> int: ...
    @property
    def max_expansion(self) -> Optional[int]: ...
    @property
    def expansion_floor(self) -> int: ...
    @property
    def max_decisions_per_byte(self) -> Optional[int]: ...
    @property
    def kinds(self) -> list[str]: ...

class _Filter:
    """What every filter class has (not a class of the module)."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __contains__(self, key: object) -> bool: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    @property
    def n(self) -> int: ...
    @property
    def kind(self) -> KindName: ...
    @property
    def m(self) -> int: ...
    @property
    def k(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def digest(self) -> int: ...
    @property
    def planned_fpr(self) -> Optional[float]: ...
    @property
    def estimated_fpr(self) -> float: ...
    def encode(self, coding: Coding = "auto", *, identity: Optional[Identity] = None) -> bytes: ...
    @classmethod
    def decode(
        cls: type[_F], data: Buffer, *, max_bytes: Optional[int] = None, limits: Optional[Limits] = None
    ) -> _F: ...
    def apply(
        self, delta: Buffer, *, max_bytes: Optional[int] = None, limits: Optional[Limits] = None
    ) -> None: ...
    def copy(self: _F) -> _F: ...
    def __copy__(self: _F) -> _F: ...
    def __deepcopy__(self: _F, memo: Any) -> _F: ...
    def __reduce__(self) -> Tuple[Any, Tuple[bytes]]: ...

class BloomFilter(_Filter):
    """A standard Bloom filter of m bits and k hash positions per key."""

    def __init__(self, m: int, k: int, seed: int = 0) -> None: ...
    def add(self, key: Key) -> None: ...
    def update(self, keys: Iterable[Key]) -> None: ...
    def __or__(self, other: BloomFilter) -> BloomFilter: ...
    def __ior__(self, other: BloomFilter) -> BloomFilter: ...
    def count_ones(self) -> int: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: Buffer, m: int, k: int, seed: int = 0, n: int = 0) -> BloomFilter: ...

class PartitionedBloomFilter(_Filter):
    """k slices of m/k bits, one position per key in each."""

    def __init__(self, m: int, k: int, seed: int = 0) -> None: ...
    def add(self, key: Key) -> None: ...
    def update(self, keys: Iterable[Key]) -> None: ...
    def __or__(self, other: PartitionedBloomFilter) -> PartitionedBloomFilter: ...
    def __ior__(self, other: PartitionedBloomFilter) -> PartitionedBloomFilter: ...
    def count_ones(self) -> int: ...

class CountingBloomFilter(_Filter):
    """4-bit counters, so that keys can be removed."""

    def __init__(self, m: int, k: int, seed: int = 0) -> None: ...
    def add(self, key: Key) -> None: ...
    def update(self, keys: Iterable[Key]) -> None: ...
    def remove(self, key: Key) -> bool: ...
    def count_nonzero(self) -> int: ...
    def saturated(self) -> int: ...
    def counters(self) -> bytes: ...
    def to_bloom(self) -> BloomFilter: ...

class ScalableBloomFilter(_Filter):
    """Layers that open as keys arrive; the rate stays below fpr."""

    def __init__(self, initial_capacity: int, fpr: float, seed: int = 0) -> None: ...
    def add(self, key: Key) -> None: ...
    def update(self, keys: Iterable[Key]) -> None: ...
    @property
    def layers(self) -> list[Tuple[int, int, int, int, bytes]]: ...
    @property
    def fpr(self) -> float: ...
    @property
    def initial_capacity(self) -> int: ...

class SparseFilter(_Filter):
    """The positions of a Bloom filter's one bits; built from its whole set."""

    def __init__(self, keys: Iterable[Key], m: int, k: int, seed: int = 0) -> None: ...
    def __or__(self, other: SparseFilter) -> SparseFilter: ...
    def count_ones(self) -> int: ...
    def positions(self) -> list[int]: ...
    def to_bloom(self) -> BloomFilter: ...
    @staticmethod
    def from_bloom(f: BloomFilter) -> SparseFilter: ...

class RibbonFilter(_Filter):
    """A solved linear system: the smallest frame for a set sent whole."""

    def __init__(self, keys: Iterable[Key], fpr: float, seed: int = 0, *, fast: bool = False) -> None: ...
    @property
    def columns(self) -> int: ...
    @property
    def rows(self) -> int: ...

class SquidDigest(_Filter):
    """A Squid cache digest; ``url in digest`` asks for a GET."""

    def __init__(self, capacity: int, bits_per_entry: int = 5) -> None: ...
    def add(self, url: Key, method: str = "GET") -> None: ...
    def update(self, urls: Iterable[Key]) -> None: ...
    def contains(self, url: Key, method: str = "GET") -> bool: ...
    def to_squid_bytes(self) -> bytes: ...
    @staticmethod
    def from_squid_bytes(
        data: Buffer, *, max_bytes: Optional[int] = None, limits: Optional[Limits] = None
    ) -> SquidDigest: ...
    @property
    def utilisation(self) -> float: ...
    @property
    def capacity(self) -> int: ...
    @property
    def count(self) -> int: ...

AnyFilter = Union[
    BloomFilter,
    PartitionedBloomFilter,
    CountingBloomFilter,
    ScalableBloomFilter,
    SparseFilter,
    RibbonFilter,
    SquidDigest,
]

class FrameInfo:
    """A frame's header, checked but not decoded."""

    version: int
    frame_type: Literal["raw", "coded", "static", "delta", "conditional-delta"]
    is_delta: bool
    kind: KindName
    m: int
    k: int
    seed: int
    n: int
    identity: Optional[Identity]
    frame_len: int
    header_len: int
    #: The signing key's id (8 bytes, the start of its public key), or None
    #: if unsigned; read, not checked (``verify`` checks it).
    signer: Optional[bytes]

class Plan:
    """A planned filter: the kind and its parameters; ``build(keys)`` makes it."""

    @property
    def kind(self) -> KindName: ...
    @property
    def n(self) -> int: ...
    @property
    def m(self) -> int: ...
    @property
    def k(self) -> int: ...
    @property
    def fpr(self) -> float: ...
    @property
    def bits_per_key(self) -> float: ...
    @property
    def compressed_bits_per_key(self) -> float: ...
    @property
    def expected_bytes(self) -> float: ...
    @property
    def bound_bytes(self) -> int: ...
    @property
    def lacks(self) -> Optional[Need]: ...
    @property
    def alternatives(self) -> list[Plan]: ...
    def build(self, keys: Optional[Iterable[Key]] = None) -> AnyFilter: ...

class Update:
    """One published frame."""

    frame: bytes
    kind: Literal["full", "delta"]
    is_full: bool
    identity: Identity

class Publisher:
    """The sending side: the smaller of a delta and a full frame, numbered."""

    def __init__(
        self,
        filter: AnyFilter,
        *,
        stream: int = 0,
        epoch: Optional[int] = None,
        full_every: int = 16,
        coding: Coding = "auto",
        signing_key: Optional[Buffer] = None,
    ) -> None: ...
    @property
    def filter(self) -> AnyFilter: ...
    @filter.setter
    def filter(self, filter: AnyFilter) -> None: ...
    @property
    def next_identity(self) -> Identity: ...
    def set_signing_key(self, key: Optional[Buffer]) -> None: ...
    @property
    def public_key(self) -> Optional[bytes]: ...
    def publish(self) -> Update: ...
    def full_frame(self) -> Optional[Update]: ...

class Subscriber:
    """The receiving side: frames in order, refusals as SyncError subclasses."""

    def __init__(
        self,
        kind: Union[None, str, type[_Filter]] = None,
        *,
        stream: Optional[int] = None,
        max_bytes: Optional[int] = None,
        limits: Optional[Limits] = None,
        verifying_keys: Optional[Iterable[Buffer]] = None,
    ) -> None: ...
    def receive(self, frame: Buffer) -> Literal["full", "delta"]: ...
    @property
    def verifying_keys(self) -> list[bytes]: ...
    @verifying_keys.setter
    def verifying_keys(self, keys: Optional[Iterable[Buffer]]) -> None: ...
    @property
    def filter(self) -> Optional[AnyFilter]: ...
    @property
    def version(self) -> Optional[Identity]: ...
    @property
    def digest(self) -> Optional[int]: ...
    @property
    def kind(self) -> Union[KindName, Literal["any"]]: ...

def decode(data: Buffer, *, max_bytes: Optional[int] = None, limits: Optional[Limits] = None) -> AnyFilter:
    """Decodes a frame of any kind into the class its header declares."""

def inspect(data: Buffer, *, max_bytes: Optional[int] = None, limits: Optional[Limits] = None) -> FrameInfo:
    """The frame's header, checked (limits and CRC) but not decoded."""

def sign(frame: Buffer, key: Buffer) -> bytes:
    """The frame signed by the 32-byte secret key (Ed25519)."""

def verify(
    frame: Buffer,
    keys: Iterable[Buffer],
    *,
    max_bytes: Optional[int] = None,
    limits: Optional[Limits] = None,
) -> FrameInfo:
    """The frame's header if one of keys (32-byte public keys) signed it;
    else raises a SignatureError."""

def public_key(secret: Buffer) -> bytes:
    """The 32-byte public key of a 32-byte secret key."""

def generate_key() -> Tuple[bytes, bytes]:
    """A new key pair (secret, public), 32 bytes each."""

def delta(old: _F, new: _F, *, identity: Optional[Identity] = None) -> bytes:
    """The smallest delta frame that turns old into new."""

def plan(
    n: int,
    fpr: Optional[float] = None,
    max_bytes: Optional[int] = None,
    needs: Union[None, Need, Iterable[Need]] = None,
    *,
    kind: Optional[KindName] = None,
    seed: int = 0,
    fast: bool = False,
    max_m: Optional[int] = None,
    max_k: Optional[int] = None,
    confidence: Optional[float] = None,
) -> Plan:
    """Plans a filter for n keys: for a rate fpr or a frame budget max_bytes."""

def _from_frame(frame: bytes) -> AnyFilter: ...
