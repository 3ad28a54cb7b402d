#!/usr/bin/env python3
"""A reference decoder for version-3 frames of docs/FORMAT.md, written from
the document alone: the version-3 header (section 2.2) with its update
identity (section 5), metadata (section 6: tag 1, Squid's digest header,
with hash scheme 2 of section 1.1; tag 2, the signer, with the signature
checked by tools/ref_ed25519.py; tag 3, a BIP158 block hash, with hash
scheme 3 of section 1.2; tag 4, BIP37's flags, with hash scheme 4 of section
1.3 and its MurmurHash3), and the counting (8.1), partitioned (8.2), scalable
(8.3) and sparse (8.4) kinds, the sparse kind's scheme-3 payload (a BIP158
basic filter: repeats, then positions; section 8.4, "Scheme 3"), and filter
type 4 (static coded, kinds 0 and 2). The coded bit arrays of section 3 come
from tools/ref_decoder.py; SipHash-2-4 (section 1.2) is written here, from the
SipHash paper, and checked against FORMAT.md's vectors at every BIP158 command.

    python3 tools/ref_kinds.py decode FRAME OUT   # writes OUT (packed bits, positions one per line, or counters as raw nibbles)
    python3 tools/ref_kinds.py apply BASE DELTA OUT   # a sparse delta: the result's positions
    python3 tools/ref_kinds.py apply-counting BASE DELTA OUT   # a counting delta: the result's counters
    python3 tools/ref_kinds.py verify FRAME PUBKEY   # a signed frame (section 6, tag 2): its signature, with the public key in hex
    python3 tools/ref_kinds.py squid FRAME OUT   # a frame with a Squid header: the digest as Squid sends it
    python3 tools/ref_kinds.py bip37 FRAME OUT   # a frame with a BIP37 record: its filterload payload (section 1.3)
    python3 tools/ref_kinds.py bip37-query FRAME HEX...   # "HEX present|absent" per key, hashed by section 1.3
    python3 tools/ref_kinds.py bip37-build LEN K TWEAK FLAGS N OUT
        # a filterload payload of LEN bytes with the keys key-1..key-N, by section 1.3, independently of any frame
    python3 tools/ref_kinds.py scalable FRAME OUT [DELTA]   # the layers (m k n capacity, then the packed bits in hex), after DELTA if given
    python3 tools/ref_kinds.py bip158 FRAME   # a scheme-3 frame: "BLOCK_HASH FILTER", both hex, the block
        # hash in internal byte order, the filter as BIP158 serialises it (section 8.4, "BIP158 bytes")
    python3 tools/ref_kinds.py bip158-query FRAME SCRIPT_HEX...   # 1 or 0 per script, one per line (section 1.2)
    python3 tools/ref_kinds.py bip158-header FRAME PREV_HEADER_HEX   # the BIP157 filter header, from the
        # previous block's filter header; both in internal byte order (hex)
    python3 tools/ref_kinds.py expect KIND M K SEED N OUT [FIRST]
        # the same OUT computed from the keys key-FIRST..key-N with XXH3 (pip install xxhash),
        # independently of any frame

Prints the header fields.
"""
import sys

import ref_decoder as rd


def decode_v3(frame: bytes):
    if frame[:2] != rd.MAGIC:
        raise rd.FrameError("bad magic")
    if len(frame) < 7:
        raise rd.FrameError("truncated")
    version, ftype, scheme, flags, kind = frame[2], frame[3], frame[4], frame[5], frame[6]
    if version != 3 or scheme not in (1, 2, 3, 4) or flags & ~0x03:
        raise rd.FrameError("unsupported header byte")
    at = 7
    seed, at = rd.varint(frame, at)
    m, at = rd.varint(frame, at)
    k, at = rd.varint(frame, at)
    n, at = rd.varint(frame, at)
    header = dict(version=3, type=ftype, kind=kind, seed=seed, m=m, k=k, n=n)
    if flags & 0x01:
        header["stream"], at = rd.varint(frame, at)
        header["epoch"], at = rd.varint(frame, at)
        header["seq"], at = rd.varint(frame, at)
    if flags & 0x02:
        meta_len, at = rd.varint(frame, at)
        if not 1 <= meta_len <= 4096:
            raise rd.FrameError("meta_len out of range")
        end, last = at + meta_len, -1
        # Section 2.3, step 2: the records must all be in the input before
        # any is read (Truncated, needed = the offset past them).
        if len(frame) < end:
            raise rd.FrameError(f"Truncated: needed {end}")
        while at < end:
            tag, at = rd.varint(frame, at)
            length, at = rd.varint(frame, at)
            # In this order: tag order, length within meta_len, unknown
            # tag, the record's length.
            if tag <= last:
                raise rd.FrameError("InvalidField: metadata tag (not increasing)")
            if length > max(0, end - at):
                raise rd.FrameError("InvalidField: metadata length (past meta_len)")
            if tag not in (1, 2, 3, 4):
                raise rd.FrameError(f"UnknownMetadata: tag {tag}")
            if tag == 1 and length != 128:
                raise rd.FrameError("InvalidField: metadata length (a Squid header is 128 bytes)")
            if tag == 2 and length != 8:
                raise rd.FrameError("InvalidField: metadata length (a signer's key id is 8 bytes)")
            if tag == 3 and length != 32:
                raise rd.FrameError("InvalidField: metadata length (a BIP158 block hash is 32 bytes)")
            if tag == 4 and length != 1:
                raise rd.FrameError("InvalidField: metadata length (a BIP37 record is 1 byte)")
            last = tag
            if tag == 1:
                header["squid_cblock"] = bytes(frame[at:at + 128])
            elif tag == 2:
                header["signer"] = bytes(frame[at:at + 8])
            elif tag == 3:
                header["block_hash"] = bytes(frame[at:at + 32])
            else:
                header["bip37_flags"] = frame[at]
            at += length
        if at != end:
            raise rd.FrameError("InvalidField: meta_len (the records do not fill it)")
    plen, at = rd.varint(frame, at)
    if not (1 <= m <= 1 << 56) or not (1 <= k <= 64):
        raise rd.FrameError("m or k out of range")
    # Section 2.3, step 3, in its order: a delta's seq, schemes 2 and 4,
    # scheme 3, a record 4 without scheme 4, a record 3 without scheme 3,
    # then a Squid header.
    if ftype in (2, 3) and flags & 0x01 and header["seq"] == 0:
        raise rd.FrameError("a delta's seq is at least 1")
    if scheme == 2 and (k != 4 or m >= 1 << 32 or seed != 0 or kind != 0):
        raise rd.FrameError("scheme 2 needs k = 4, m < 2^32, seed 0, kind 0")
    if scheme == 4 and (k > 50 or seed >= 1 << 32 or m % 8 or m > 288000 or kind != 0):
        raise rd.FrameError("scheme 4 needs k <= 50, seed < 2^32, m a multiple of 8 up to 288000, kind 0")
    header["scheme"] = scheme
    if scheme == 3:
        if k != 1 or seed != 0:
            raise rd.FrameError("InvalidField: hash scheme (scheme 3 needs k = 1 and seed 0)")
        if kind != 4:
            raise rd.FrameError("InvalidField: hash scheme (scheme 3 needs kind 4)")
        if ftype != 1:
            raise rd.FrameError("InvalidField: filter type at offset 3 (scheme 3 needs type 1)")
        if "block_hash" not in header:
            raise rd.FrameError("InvalidField: hash scheme (scheme 3 needs record 3)")
        if m != max(n, 1) * BIP158_M:
            raise rd.FrameError("InvalidField: m (scheme 3 needs m = max(n, 1) * 784931)")
    if "bip37_flags" in header and scheme != 4:
        raise rd.FrameError("InvalidField: metadata tag (a BIP37 record needs scheme 4)")
    if "block_hash" in header and scheme != 3:
        raise rd.FrameError("InvalidField: metadata tag (record 3 needs scheme 3)")
    if "squid_cblock" in header:
        check_squid(header["squid_cblock"], scheme, m, k)
    raw_len = (m + 7) // 8
    if kind in (0, 2):
        if kind == 2 and m % k:
            raise rd.FrameError("partitioned m is not a multiple of k")
        if ((ftype == 0 and plen != raw_len) or (ftype == 1 and plen >= raw_len)
                or (ftype == 2 and plen < 16) or (ftype == 3 and plen < 18)
                or (ftype == 4 and not 3 <= plen < raw_len)):
            raise rd.FrameError("payload length inconsistent with type")
    elif kind == 3:
        if ftype not in (1, 2) or plen < (17 if ftype == 2 else 1):
            raise rd.FrameError("scalable frames are type 1 or 2 with a payload")
    elif kind == 1:
        half = (m + 1) // 2
        if ftype not in (0, 1, 2) or (ftype == 0 and plen != half) or (ftype == 1 and plen >= half) or (ftype == 2 and plen < 16):
            raise rd.FrameError("counting frames are type 0 (ceil(m/2) bytes), 1 (shorter) or 2 (a delta)")
    elif kind == 4:
        if ftype not in (1, 2) or plen < (17 if ftype == 2 else 1):
            raise rd.FrameError("sparse frames are type 1 or 2 with a payload")
    else:
        raise rd.FrameError("kind not defined here")
    end = at + plen
    # Section 2.3, step 6 before step 7: Truncated, then TrailingBytes,
    # and only then the CRC (a frame with both trailing bytes and a bad
    # CRC is TrailingBytes).
    # Section 6, tag 2: a signed frame's 64-byte signature follows the CRC.
    sig_len = 64 if "signer" in header else 0
    if len(frame) < end + 4 + sig_len:
        raise rd.FrameError("Truncated: frame length mismatch")
    if len(frame) > end + 4 + sig_len:
        raise rd.FrameError("TrailingBytes: frame length mismatch")
    if rd.crc32c(frame[:end]) != int.from_bytes(frame[end:end + 4], "little"):
        raise rd.FrameError("checksum mismatch")
    if sig_len:
        header["signed_part"] = bytes(frame[:end + 4])
        header["signature"] = bytes(frame[end + 4:])
    payload = frame[at:end]
    header["frame_len"] = len(frame)
    if kind == 3:
        header["payload"] = bytes(payload)
        return header, None
    if kind == 1 and ftype == 2:
        header["payload"] = bytes(payload)
        return header, None
    if kind == 1:
        return header, counting_payload(payload, ftype, m, len(frame))
    if kind == 4 and ftype == 2:
        header["base_digest"] = int.from_bytes(payload[0:8], "little")
        header["result_digest"] = int.from_bytes(payload[8:16], "little")
        return header, sparse_positions(payload[16:], m)
    if kind == 4 and scheme == 3:
        header["repeats"], positions = bip158_payload(payload, m, n, at)
        return header, positions
    if kind == 4:
        return header, sparse_positions(payload, m)
    if ftype == 4:
        # Type 4, static coded (section 3; version 3 only, kinds 0 and 2).
        return header, rd.decode_static(payload, m)
    # Standard and partitioned: the same bit array payloads as version 2.
    v2 = bytearray(frame[:2]) + bytes([1 if ftype < 3 else 2, ftype, 1, 0])
    for v in (seed, m, k, n, plen):
        v2 += rd.put_varint(v)
    v2 += payload
    v2 += rd.crc32c(bytes(v2)).to_bytes(4, "little")
    h2, out = rd.decode(bytes(v2))
    for f in ("base_digest", "result_digest", "base_ones"):
        if f in h2:
            header[f] = h2[f]
    return header, out


def check_squid(cb: bytes, scheme: int, m: int, k: int):
    """Section 6, tag 1: Squid's own header checks, then the filter's shape."""
    cur, req = (int.from_bytes(cb[i:i + 2], "big", signed=True) for i in (0, 2))
    cap, count, dels, size = (int.from_bytes(cb[i:i + 4], "big", signed=True) for i in (4, 8, 12, 16))
    bpe, hfc = cb[20], cb[21]
    if req > 5 or cur < 3 or req > cur:
        raise rd.FrameError("Squid version check")
    if size <= 0 or cap <= 0 or bpe <= 0 or hfc <= 0:
        raise rd.FrameError("Squid header corrupted")
    if size != min((cap * bpe + 7) // 8, 268435454) or hfc != 4:
        raise rd.FrameError("Squid mask size or hash count")
    if scheme != 2 or m != 8 * size or k != 4:
        raise rd.FrameError("Squid header does not describe the filter")


class RangeDecoder:
    """Section 8.1: LZMA's range decoder with count-based bit models."""

    def __init__(self, vals: bytes, models: int):
        if len(vals) < 5 or vals[0] != 0:
            raise rd.FrameError("values start")
        self.vals, self.pos = vals, 5
        self.code, self.rng = int.from_bytes(vals[1:5], "big"), 0xFFFFFFFF
        if self.code == 0xFFFFFFFF:
            raise rd.FrameError("values start")
        self.models = [[1, 1] for _ in range(models)]

    def decide(self, j: int) -> int:
        c0, c1 = self.models[j]
        p0 = min(4095, max(1, (c0 * 4096) // (c0 + c1)))
        bound = (self.rng >> 12) * p0
        if self.code < bound:
            self.rng, bit = bound, 0
        else:
            self.code, self.rng, bit = self.code - bound, self.rng - bound, 1
        self.models[j][bit] += 1
        if self.models[j][0] + self.models[j][1] >= 4096:
            self.models[j] = [(c + 1) // 2 for c in self.models[j]]
        while self.rng < 1 << 24:
            if self.pos >= len(self.vals):
                raise rd.FrameError("values truncated")
            self.rng = (self.rng << 8) & 0xFFFFFFFF
            self.code = ((self.code << 8) | self.vals[self.pos]) & 0xFFFFFFFF
            self.pos += 1
        # After the model update and the whole renormalisation loop, never
        # before it (section 8.1).
        if self.code >= self.rng:
            raise rd.FrameError("values corrupt")
        return bit

    def unary(self, most: int) -> int:
        v = 0
        for j in range(most):
            if not self.decide(j):
                break
            v += 1
        return v

    def finish(self):
        if self.pos != len(self.vals):
            raise rd.FrameError("values have trailing bytes")


def counting_map(payload: bytes, at: int, m: int):
    """A map (type, length, bytes) of m bits: (list of bits, end)."""
    mtype = payload[at]
    mlen, at = rd.varint(payload, at + 1)
    if at + mlen > len(payload):
        raise rd.FrameError("map runs past the payload")
    mp = payload[at:at + mlen]
    if mtype == 0:
        if mlen != (m + 7) // 8:
            raise rd.FrameError("raw map length")
        if any((mp[i // 8] >> (i % 8)) & 1 for i in range(m, 8 * mlen)):
            raise rd.FrameError("map padding")
        bits = [(mp[i // 8] >> (i % 8)) & 1 for i in range(m)]
    elif mtype == 1:
        if mlen >= (m + 7) // 8:
            raise rd.FrameError("coded map too long")
        bits = rd.decode_bits(mp, m)
    else:
        raise rd.FrameError("map type")
    return bits, at + mlen


# The receiver's expansion limit E (section 2.3, step 5), which also bounds
# the counting values' work (section 8.1, "Work"); None: no limit.
MAX_EXPANSION = 4096


def check_work(bits, per_value: int, frame_len: int):
    """Section 8.1, "Work": refuse when 32 * D > E * frame length, D being
    the most decisions the values can take, before any value is decoded."""
    if MAX_EXPANSION is not None and 32 * per_value * sum(bits) > MAX_EXPANSION * frame_len:
        raise rd.FrameError("LimitExceeded: counting value decisions")


def counting_payload(payload: bytes, ftype: int, m: int, frame_len: int) -> bytes:
    """Section 8.1: the counters as the raw nibble array (ceil(m/2) bytes)."""
    if ftype == 0:
        if m % 2 and payload[-1] >> 4:
            raise rd.FrameError("padding counter set")
        return bytes(payload)
    bits, at = counting_map(payload, 0, m)
    check_work(bits, 14, frame_len)
    dec = RangeDecoder(payload[at:], 14)
    counters = bytearray((m + 1) // 2)
    for i, b in enumerate(bits):
        if b:
            counters[i // 2] |= (1 + dec.unary(14)) << (4 * (i % 2))
    dec.finish()
    return bytes(counters)


def counting_digest(header, nibbles: bytes) -> int:
    import xxhash
    head = bytes([1]) + rd.put_varint(header["seed"]) + rd.put_varint(header["m"]) + rd.put_varint(header["k"]) + bytes([1])
    return xxhash.xxh3_64_intdigest(head + nibbles, seed=0)


def apply_counting(base_header, nibbles: bytes, delta_header, payload: bytes) -> bytes:
    """Section 8.1, type 2: the result's counters, checked by both digests."""
    m = base_header["m"]
    if int.from_bytes(payload[0:8], "little") != counting_digest(base_header, nibbles):
        raise rd.FrameError("wrong base")
    bits, at = counting_map(payload, 16, m)
    check_work(bits, 15, delta_header["frame_len"])
    dec = RangeDecoder(payload[at:], 15)
    out = bytearray(nibbles)
    for i, b in enumerate(bits):
        if b:
            v = dec.unary(15)
            out[i // 2] = (out[i // 2] & (0xF0 if i % 2 == 0 else 0x0F)) | (v << (4 * (i % 2)))
    dec.finish()
    if int.from_bytes(payload[8:16], "little") != counting_digest(delta_header, bytes(out)):
        raise rd.FrameError("result mismatch")
    return bytes(out)


def _bits(payload: bytes, at: int, m: int):
    """A layer's bits (section 8.3): type, length, bytes -> (packed, at)."""
    ty = payload[at]
    ln, at = rd.varint(payload, at + 1)
    if at + ln > len(payload):
        raise rd.FrameError("layer bytes past the payload")
    body = payload[at:at + ln]
    raw = (m + 7) // 8
    if ty == 0:
        if ln != raw:
            raise rd.FrameError("raw layer length")
        packed = bytes(body)
    elif ty == 1:
        if ln >= raw:
            raise rd.FrameError("coded layer too long")
        packed = rd.decode_coded(body, m)
    else:
        raise rd.FrameError("layer type")
    if any((packed[i // 8] >> (i % 8)) & 1 for i in range(m, 8 * raw)):
        raise rd.FrameError("layer padding")
    return packed, at + ln


def _layer(payload: bytes, at: int):
    vals = []
    for _ in range(4):
        v, at = rd.varint(payload, at)
        vals.append(v)
    m, k, n, cap = vals
    if not (1 <= m <= 1 << 56 and 1 <= k <= 64):
        raise rd.FrameError("layer m or k")
    packed, at = _bits(payload, at, m)
    return dict(m=m, k=k, n=n, capacity=cap, bits=packed), at


def scalable_layers(header):
    """Section 8.3, type 1: the policy and the layers."""
    import struct
    p = header["payload"]
    cap0, at = rd.varint(p, 0)
    growth, at = rd.varint(p, at)
    fpr, tight, mbk = struct.unpack_from("<ddd", p, at)
    at += 24
    if cap0 < 1 or growth < 1 or not (0 < fpr < 1) or not (0 < tight < 1) or not (mbk >= 1 and mbk < float("inf")):
        raise rd.FrameError("policy out of range")
    count, at = rd.varint(p, at)
    if not 1 <= count <= 64:
        raise rd.FrameError("layer count")
    layers = []
    for _ in range(count):
        layer, at = _layer(p, at)
        layers.append(layer)
        if sum(l["m"] for l in layers) > header["m"]:
            raise rd.FrameError("layers exceed the header's m")
    if at != len(p):
        raise rd.FrameError("bytes after the last layer")
    check_scalable_totals(header, layers)
    return layers


def check_scalable_totals(header, layers):
    if (sum(l["m"] for l in layers), max(l["k"] for l in layers), sum(l["n"] for l in layers)) != (header["m"], header["k"], header["n"]):
        raise rd.FrameError("layers do not add up to the header")


def scalable_digest(seed: int, layers) -> int:
    import xxhash
    parts = b"".join(
        rd.digest(dict(seed=(seed + i) % (1 << 64), m=l["m"], k=l["k"]), l["bits"]).to_bytes(8, "little")
        for i, l in enumerate(layers))
    return xxhash.xxh3_64_intdigest(parts, seed=0)


def apply_scalable(base_header, layers, delta_header):
    """Section 8.3, type 2: the result's layers, checked by both digests."""
    p = delta_header["payload"]
    seed = base_header["seed"]
    if int.from_bytes(p[0:8], "little") != scalable_digest(seed, layers):
        raise rd.FrameError("wrong base")
    want = int.from_bytes(p[8:16], "little")
    count, at = rd.varint(p, 16)
    if not len(layers) <= count <= 64:
        raise rd.FrameError("layer count")
    out = []
    for l in layers:
        n, at = rd.varint(p, at)
        xor, at = _bits(p, at, l["m"])
        out.append(dict(l, n=n, bits=bytes(a ^ b for a, b in zip(l["bits"], xor))))
    for _ in range(count - len(layers)):
        layer, at = _layer(p, at)
        out.append(layer)
    if at != len(p):
        raise rd.FrameError("bytes after the last layer")
    check_scalable_totals(delta_header, out)
    if scalable_digest(seed, out) != want:
        raise rd.FrameError("result mismatch")
    return out


def expect_scalable(layers_shape, seed: int, n: int):
    """The layers of keys key-1..key-N from the keys (section 8.3): each key
    goes into the newest layer unless a layer already has it; a layer takes
    capacity_i keys. Layer shapes (m, k, capacity) come from the frame."""
    built = []
    for j in range(1, n + 1):
        key = f"key-{j}".encode()
        present = any(
            all((l["bits"][p // 8] >> (p % 8)) & 1 for p in key_positions(key, (seed + i) % (1 << 64), l["m"], l["k"], False))
            for i, l in enumerate(built))
        if present:
            continue
        if not built or built[-1]["n"] >= built[-1]["capacity"]:
            shape = layers_shape[len(built)]
            built.append(dict(m=shape["m"], k=shape["k"], n=0, capacity=shape["capacity"],
                              bits=bytearray((shape["m"] + 7) // 8)))
        l, i = built[-1], len(built) - 1
        for p in key_positions(key, (seed + i) % (1 << 64), l["m"], l["k"], False):
            l["bits"][p // 8] |= 1 << (p % 8)
        l["n"] += 1
    return [dict(l, bits=bytes(l["bits"])) for l in built]


def expect_counting(m: int, k: int, seed: int, n: int) -> bytes:
    """The counters of keys key-1..key-N, from the keys (section 8.1)."""
    counts = [0] * m
    for j in range(1, n + 1):
        for p in set(key_positions(f"key-{j}".encode(), seed, m, k, False)):
            counts[p] = min(15, counts[p] + 1)
    out = bytearray((m + 1) // 2)
    for i, c in enumerate(counts):
        out[i // 2] |= c << (4 * (i % 2))
    return bytes(out)


def sparse_positions(payload: bytes, m: int):
    w, q = rd.varint(payload, 0)
    if w == 0:
        if q != len(payload):
            raise rd.FrameError("bytes after an empty count")
        return []
    if q >= len(payload):
        raise rd.FrameError("no Rice parameter")
    r = payload[q]
    if r > 56:
        raise rd.FrameError("Rice parameter above 56")
    gaps = payload[q + 1:]
    if w > min(m, 8 * len(gaps)):
        raise rd.FrameError("too many positions")
    bit = 0

    def read():
        nonlocal bit
        if bit // 8 >= len(gaps):
            raise rd.FrameError("truncated gaps")
        v = (gaps[bit // 8] >> (bit % 8)) & 1
        bit += 1
        return v

    out, nxt = [], 0
    for _ in range(w):
        quot = 0
        while read():
            quot += 1
        low = 0
        for i in range(r):
            low |= read() << i
        d = (quot << r) | low
        if nxt + d > m - 1:
            raise rd.FrameError("position past m")
        out.append(nxt + d)
        nxt = nxt + d + 1
    if (bit + 7) // 8 != len(gaps):
        raise rd.FrameError("bytes after the last gap")
    while bit % 8:
        if read():
            raise rd.FrameError("padding bits set")
    return out


# --- Hash scheme 3: BIP158 basic block filters (sections 1.2, 6 tag 3, 8.4) ---

BIP158_M = 784931
BIP158_P = 19
_MASK64 = (1 << 64) - 1


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _MASK64


def siphash24(k0: int, k1: int, data: bytes) -> int:
    """SipHash-2-4 (Aumasson and Bernstein), 64-bit output, key k0 || k1
    (two u64 read little-endian from the key's 16 bytes)."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573

    def rounds(c):
        nonlocal v0, v1, v2, v3
        for _ in range(c):
            v0 = (v0 + v1) & _MASK64
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _MASK64
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _MASK64
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _MASK64
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)

    tail = len(data) % 8
    words = [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data) - tail, 8)]
    words.append(int.from_bytes(data[len(data) - tail:], "little") | ((len(data) & 0xFF) << 56))
    for w in words:
        v3 ^= w
        rounds(2)
        v0 ^= w
    v2 ^= 0xFF
    rounds(4)
    return v0 ^ v1 ^ v2 ^ v3


def siphash_selftest():
    """Section 1.2's vectors: key 00 01 .. 0f, messages 00 01 .. (i-1)."""
    key = bytes(range(16))
    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little")
    for i, want in ((0, 0x726FDB47DD0E0E31), (1, 0x74F839C593DC67FD), (63, 0x958A324CEB064572)):
        got = siphash24(k0, k1, bytes(range(i)))
        if got != want:
            raise AssertionError(f"SipHash-2-4 vector {i}: {got:016x} != {want:016x}")
    h = bytes.fromhex("43497fd7f826957108f4a30fd9cec3aeba79972084e90ead01ea330900000000")
    assert int.from_bytes(h[:8], "little") == 0x719526F8D77F4943
    assert int.from_bytes(h[8:16], "little") == 0xAEC3CED90FA3F408


def bip158_position(block_hash: bytes, script: bytes, m: int) -> int:
    """Section 1.2: floor(SipHash-2-4(k0, k1, script) * m / 2^64)."""
    k0 = int.from_bytes(block_hash[0:8], "little")
    k1 = int.from_bytes(block_hash[8:16], "little")
    return (siphash24(k0, k1, script) * m) >> 64


def bip158_payload(payload: bytes, m: int, n: int, offset: int):
    """Section 8.4, "Scheme 3": the repeats (sorted, a value present t times
    listed t - 1 times) and the w distinct positions. Errors: Bip158 with
    detail BadRepeats, the positions' own Sparse errors."""
    def bad(what):
        raise rd.FrameError(f"Bip158 at {offset}: BadRepeats ({what})")
    try:
        d, at = rd.varint(payload, 0)
    except rd.FrameError as e:
        bad(f"count: {e}")
    if d > n or d > len(payload):
        bad(f"count {d} above n {n} or payload_len {len(payload)}")
    repeats, total = [], 0
    for j in range(d):
        try:
            v, at = rd.varint(payload, at)
        except rd.FrameError as e:
            bad(f"repeat {j}: {e}")
        total += v
        if total >= m:
            bad(f"repeat {j} at or past m")
        repeats.append(total)
    positions = sparse_positions(payload[at:], m)
    if len(positions) + d != n:
        bad(f"w {len(positions)} + d {d} != n {n}")
    have = set(positions)
    for r in repeats:
        if r not in have:
            bad(f"repeat {r} is not a position")
    return repeats, positions


def compact_size(v: int) -> bytes:
    if v < 0xFD:
        return bytes([v])
    if v <= 0xFFFF:
        return b"\xfd" + v.to_bytes(2, "little")
    if v <= 0xFFFFFFFF:
        return b"\xfe" + v.to_bytes(4, "little")
    return b"\xff" + v.to_bytes(8, "little")


def bip158_bytes(header, positions) -> bytes:
    """Section 8.4, "BIP158 bytes": CompactSize N, then the N sorted values
    (positions and repeats) as Golomb-Rice codes, P = 19, MSB first, the
    last byte padded with zero bits."""
    values = sorted(positions + header["repeats"])
    assert len(values) == header["n"]
    bits, prev = [], 0
    for v in values:
        e = v - prev
        prev = v
        bits += [1] * (e >> BIP158_P) + [0]
        bits += [(e >> (BIP158_P - 1 - i)) & 1 for i in range(BIP158_P)]
    out = bytearray((len(bits) + 7) // 8)
    for b, bit in enumerate(bits):
        if bit:
            out[b // 8] |= 0x80 >> (b % 8)
    return compact_size(len(values)) + bytes(out)


def dsha256(data: bytes) -> bytes:
    import hashlib
    return hashlib.sha256(hashlib.sha256(data).digest()).digest()


def decode_bip158(path: str):
    siphash_selftest()
    header, positions = decode_v3(open(path, "rb").read())
    if header.get("scheme") != 3:
        raise rd.FrameError("not a scheme-3 (BIP158) frame")
    return header, positions


def sparse_digest(header, positions) -> int:
    """Section 8.4: XXH3-64 of scheme, seed, m, k, 0x04, w, positions (u64 LE)."""
    import xxhash
    data = bytes([1]) + rd.put_varint(header["seed"]) + rd.put_varint(header["m"])
    data += rd.put_varint(header["k"]) + bytes([4]) + rd.put_varint(len(positions))
    data += b"".join(p.to_bytes(8, "little") for p in positions)
    return xxhash.xxh3_64_intdigest(data, seed=0)


def apply_sparse(base_frame: bytes, delta_frame: bytes):
    bh, base = decode_v3(base_frame)
    dh, changes = decode_v3(delta_frame)
    if bh["kind"] != 4 or dh["kind"] != 4 or dh["type"] != 2:
        raise rd.FrameError("need a sparse filter and a sparse delta")
    if any(bh[f] != dh[f] for f in ("seed", "m", "k")):
        raise rd.FrameError("parameters differ")
    if sparse_digest(bh, base) != dh["base_digest"]:
        raise rd.FrameError("delta was made from another base")
    result = sorted(set(base) ^ set(changes))
    if sparse_digest(dh, result) != dh["result_digest"]:
        raise rd.FrameError("result digest mismatch")
    return result


def murmur3_x86_32(seed: int, key: bytes) -> int:
    """Section 1.3, MurmurHash3_x86_32, step by step."""
    M = 0xFFFFFFFF
    c1, c2 = 0xcc9e2d51, 0x1b873593

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & M

    h = seed & M
    whole = len(key) // 4 * 4
    for at in range(0, whole, 4):
        w = int.from_bytes(key[at:at + 4], "little")
        w = (rotl((w * c1) & M, 15) * c2) & M
        h ^= w
        h = (rotl(h, 13) * 5 + 0xe6546b64) & M
    tail = key[whole:]
    if tail:
        w = int.from_bytes(tail, "little")
        w = (rotl((w * c1) & M, 15) * c2) & M
        h ^= w
    h ^= len(key) & M
    h ^= h >> 16
    h = (h * 0x85ebca6b) & M
    h ^= h >> 13
    h = (h * 0xc2b2ae35) & M
    h ^= h >> 16
    return h


def bip37_positions(key: bytes, seed: int, m: int, k: int):
    """Section 1.3: s_i = i * 0xFBA4C795 + seed mod 2^32, MurmurHash3 mod m."""
    return [murmur3_x86_32((i * 0xFBA4C795 + seed) & 0xFFFFFFFF, key) % m for i in range(k)]


def compact_size(x: int) -> bytes:
    if x < 0xfd:
        return bytes([x])
    if x <= 0xffff:
        return b"\xfd" + x.to_bytes(2, "little")
    if x <= 0xffffffff:
        return b"\xfe" + x.to_bytes(4, "little")
    return b"\xff" + x.to_bytes(8, "little")


def filterload(packed: bytes, k: int, seed: int, flags: int) -> bytes:
    """Section 1.3, "The filterload payload"."""
    return (compact_size(len(packed)) + packed + k.to_bytes(4, "little")
            + seed.to_bytes(4, "little") + bytes([flags]))


def key_positions(key: bytes, seed: int, m: int, k: int, partitioned: bool):
    import xxhash
    mask = (1 << 64) - 1
    h = xxhash.xxh3_128_intdigest(key, seed=seed)
    h1, h2 = h & mask, h >> 64
    s = m // k if partitioned else m
    out = []
    for i in range(k):
        g = (h1 + i * h2 + (i ** 3 - i) // 6) & mask
        p = (g * s) >> 64
        out.append(i * s + p if partitioned else p)
    return out


def expect(kind: int, m: int, k: int, seed: int, n: int, first: int = 1):
    if kind == 1:
        return expect_counting(m, k, seed, n)
    ones = set()
    for j in range(first, n + 1):
        ones.update(key_positions(f"key-{j}".encode(), seed, m, k, kind == 2))
    if kind == 4:
        return sorted(ones)
    packed = bytearray((m + 7) // 8)
    for p in ones:
        packed[p // 8] |= 1 << (p % 8)
    return bytes(packed)


def write(out, path):
    if isinstance(out, list):
        open(path, "w").write("".join(f"{p}\n" for p in out))
    else:
        open(path, "wb").write(out)


if __name__ == "__main__":
    if sys.argv[1] == "decode":
        header, out = decode_v3(open(sys.argv[2], "rb").read())
        write(out, sys.argv[3])
        print(" ".join(f"{k}={v}" for k, v in header.items()))
    elif sys.argv[1] == "verify":
        # Section 6, tag 2: the frame's signer must be PUBKEY (hex) and its
        # signature must verify.
        import ref_ed25519
        header, _ = decode_v3(open(sys.argv[2], "rb").read())
        public = bytes.fromhex(sys.argv[3])
        if "signer" not in header:
            raise rd.FrameError("Unsigned")
        if header["signer"] != public[:8]:
            raise rd.FrameError(f"UnknownKey: {header['signer'].hex()}")
        if not ref_ed25519.verify(public, header["signed_part"], header["signature"]):
            raise rd.FrameError("BadSignature")
        print(f"signed by {header['signer'].hex()}: signature verifies")
    elif sys.argv[1] == "scalable":
        header, _ = decode_v3(open(sys.argv[2], "rb").read())
        layers = scalable_layers(header)
        if len(sys.argv) > 4:
            dh, _ = decode_v3(open(sys.argv[4], "rb").read())
            layers = apply_scalable(header, layers, dh)
        open(sys.argv[3], "w").write("".join(
            f"{l['m']} {l['k']} {l['n']} {l['capacity']} {l['bits'].hex()}\n" for l in layers))
        print(f"{len(layers)} layers")
    elif sys.argv[1] == "squid":
        header, out = decode_v3(open(sys.argv[2], "rb").read())
        open(sys.argv[3], "wb").write(header.pop("squid_cblock") + out)
        print(" ".join(f"{k}={v}" for k, v in header.items()))
    elif sys.argv[1] == "bip37":
        header, out = decode_v3(open(sys.argv[2], "rb").read())
        if header.get("scheme") != 4 or "bip37_flags" not in header or header["type"] in (2, 3):
            raise rd.FrameError("not a full BIP37 frame (scheme 4, tag 4)")
        open(sys.argv[3], "wb").write(filterload(out, header["k"], header["seed"], header["bip37_flags"]))
        print(header)
    elif sys.argv[1] == "bip37-query":
        header, out = decode_v3(open(sys.argv[2], "rb").read())
        if header.get("scheme") != 4:
            raise rd.FrameError("not a scheme-4 frame")
        for hx in sys.argv[3:]:
            ps = bip37_positions(bytes.fromhex(hx), header["seed"], header["m"], header["k"])
            hit = all(out[p // 8] >> (p % 8) & 1 for p in ps)
            print(hx, "present" if hit else "absent")
    elif sys.argv[1] == "bip37-build":
        length, k, tweak, flags, n = (int(a, 0) for a in sys.argv[2:7])
        packed = bytearray(length)
        for j in range(1, n + 1):
            for p in bip37_positions(f"key-{j}".encode(), tweak, 8 * length, k):
                packed[p // 8] |= 1 << (p % 8)
        open(sys.argv[7], "wb").write(filterload(bytes(packed), k, tweak, flags))
    elif sys.argv[1] == "apply-counting":
        bh, nib = decode_v3(open(sys.argv[2], "rb").read())
        dh, _ = decode_v3(open(sys.argv[3], "rb").read())
        out = apply_counting(bh, nib, dh, dh["payload"])
        open(sys.argv[4], "wb").write(out)
        print("applied")
    elif sys.argv[1] == "apply":
        out = apply_sparse(open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read())
        write(out, sys.argv[4])
        print("applied")
    elif sys.argv[1] == "bip158":
        header, positions = decode_bip158(sys.argv[2])
        print(header["block_hash"].hex(), bip158_bytes(header, positions).hex())
    elif sys.argv[1] == "bip158-query":
        # Section 1.2: present if n >= 1 and the script's position is one of
        # the filter's (a repeat is also a position).
        header, positions = decode_bip158(sys.argv[2])
        have = set(positions)
        for script in sys.argv[3:]:
            p = bip158_position(header["block_hash"], bytes.fromhex(script), header["m"])
            print(1 if header["n"] >= 1 and p in have else 0)
    elif sys.argv[1] == "bip158-header":
        # Section 8.4: SHA-256d(SHA-256d(BIP158 bytes) || previous header).
        header, positions = decode_bip158(sys.argv[2])
        prev = bytes.fromhex(sys.argv[3])
        if len(prev) != 32:
            raise SystemExit("PREV_HEADER_HEX must be 32 bytes")
        print(dsha256(dsha256(bip158_bytes(header, positions)) + prev).hex())
    elif sys.argv[1] == "expect":
        kind, m, k, seed, n = (int(a) for a in sys.argv[2:7])
        first = int(sys.argv[8]) if len(sys.argv) > 8 else 1
        write(expect(kind, m, k, seed, n, first), sys.argv[7])
