#!/usr/bin/env python3
"""A reference decoder for compressed-bloom frames, written from
docs/FORMAT.md alone (it shares no code with the Rust crate).

    python3 tools/ref_decoder.py FRAME            # prints the header
    python3 tools/ref_decoder.py FRAME OUT.bits   # also writes the packed bit array
    python3 tools/ref_decoder.py BASE DELTA OUT.bits   # applies a delta frame

Plain Python; slow, but exact. Deltas need the `xxhash` package for their
digests (XXH3-64).
"""
import sys

MAGIC = b"\xcb\xf1"


class FrameError(Exception):
    pass


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def varint(data: bytes, at: int):
    v = 0
    for i in range(10):
        if at + i >= len(data):
            raise FrameError("truncated varint")
        b = data[at + i]
        if i == 9 and b > 1:
            raise FrameError("varint exceeds 64 bits")
        v |= (b & 0x7F) << (7 * i)
        if b & 0x80 == 0:
            if i > 0 and b == 0:
                raise FrameError("non-canonical varint")
            return v, at + i + 1
    raise FrameError("varint exceeds 64 bits")


def build_model(b: int, ones: int):
    minority_is_one = 2 * ones <= b
    minority = ones if minority_is_one else b - ones
    p = ((2 * minority + 1) << 32) // (2 * b + 2)
    p = max(p, 1)
    t = 0
    while t < 40 and (p << (t + 1)) <= (1 << 28):
        t += 1
    g = (1 << 32) - p
    for _ in range(t):
        g = (g * g) >> 32
    weights = []
    rem = 1 << 32
    L = 0
    while True:
        nxt = (rem * g) >> 32
        weights.append(rem - nxt)
        rem = nxt
        L += 1
        if rem <= (1 << 28) or L == 96:
            break
    weights.append(rem)
    f = [max(1, (w * 4096 + (1 << 31)) >> 32) for w in weights]
    while sum(f) != 4096:
        j = max(range(len(f)), key=lambda i: (f[i], -i))
        f[j] += -1 if sum(f) > 4096 else 1
    start = [sum(f[:i]) for i in range(len(f))]
    return dict(minority_is_one=minority_is_one, t=t, L=L, f=f, start=start,
                escape_len=L << t)


def decode_block(stream: bytes, B: int, fixed_model=None):
    """A block stream of sections 3.1-3.3 for B bits, as B bytes of 0 or 1.

    With fixed_model=None (type 1) the model follows the schedule of section
    3.2. With a model from build_model (type 4, mode 0: build(B, ones) for
    the whole block) the schedule never rebuilds it, and each error message
    starts with the error's name (UnexpectedEnd, BadState, RunPastEnd,
    TrailingData); type 1's messages are unchanged."""

    def fail(name, msg):
        raise FrameError(f"{name}: {msg}" if fixed_model is not None else msg)

    bits = bytearray(B)  # one byte per bit, 0 or 1
    S = 4 if B >= (1 << 20) else 1
    if len(stream) < 4 * S:
        fail("UnexpectedEnd", "truncated block states")
    x = [int.from_bytes(stream[4 * i:4 * i + 4], "little") for i in range(S)]
    if any(v < (1 << 16) for v in x):
        fail("BadState", "initial state below 2^16")
    rd = 4 * S
    lane = 0

    def step(f, start, find):
        nonlocal rd, lane
        v = x[lane]
        slot = v % 4096
        s = find(slot)
        v = f(s) * (v // 4096) + slot - start(s)
        if v < (1 << 16):
            if rd + 2 > len(stream):
                fail("UnexpectedEnd", "stream ends early")
            v = (v << 16) | int.from_bytes(stream[rd:rd + 2], "little")
            rd += 2
        x[lane] = v
        lane = (lane + 1) % S
        return s

    pos, threshold = 0, 16
    model = build_model(0, 0) if fixed_model is None else fixed_model
    while True:
        if fixed_model is None and pos >= threshold:
            ones = sum(bits[:pos])
            while threshold <= pos:
                threshold *= 2
            model = build_model(pos, ones)
        fm, sm = model["f"], model["start"]
        s = step(lambda s: fm[s], lambda s: sm[s],
                 lambda slot: max(i for i in range(len(fm)) if sm[i] <= slot))
        majority = 0 if model["minority_is_one"] else 1
        if s == model["L"]:
            if pos + model["escape_len"] > B:
                fail("RunPastEnd", "escape past block end")
            for i in range(pos, pos + model["escape_len"]):
                bits[i] = majority
            pos += model["escape_len"]
            continue
        run = s << model["t"]
        width, shift = model["t"], 0
        while width > 0:
            c = min(width, 12)
            fu = 1 << (12 - c)
            v = step(lambda v: fu, lambda v: v * fu, lambda slot: slot // fu)
            run += v << shift
            shift += c
            width -= c
        if pos + run > B:
            fail("RunPastEnd", "run past block end")
        for i in range(pos, pos + run):
            bits[i] = majority
        pos += run
        if pos == B:
            break
        bits[pos] = 1 - majority
        pos += 1
    if rd != len(stream):
        fail("TrailingData", "unread bytes in block stream")
    if any(v != (1 << 16) for v in x):
        fail("BadState", "final state is not 2^16")
    return bits


def decode(frame: bytes):
    if frame[:2] != MAGIC:
        raise FrameError("bad magic")
    if len(frame) < 6:
        raise FrameError("truncated")
    version, ftype, scheme, flags = frame[2], frame[3], frame[4], frame[5]
    if version not in (1, 2) or scheme != 1 or flags != 0:
        raise FrameError("unsupported header byte")
    # Type 4 (static coded) exists only in version 3 (tools/ref_kinds.py):
    # here it is an unknown type, like any type above 3.
    if ftype not in ((0, 1, 2) if version == 1 else (0, 1, 2, 3)):
        raise FrameError("unknown filter type for this version")
    at = 6
    seed, at = varint(frame, at)
    m, at = varint(frame, at)
    k, at = varint(frame, at)
    n, at = varint(frame, at)
    plen, at = varint(frame, at)
    if not (1 <= m <= 1 << 56) or not (1 <= k <= 64):
        raise FrameError("m or k out of range")
    raw_len = (m + 7) // 8
    if ((ftype == 0 and plen != raw_len) or (ftype == 1 and plen >= raw_len)
            or (ftype == 2 and plen < 16) or (ftype == 3 and plen < 18)):
        raise FrameError("payload length inconsistent with type")
    end = at + plen
    # Section 2.3, step 6 before step 7: Truncated, then TrailingBytes,
    # and only then the CRC.
    if len(frame) < end + 4:
        raise FrameError("Truncated: frame length mismatch")
    if len(frame) > end + 4:
        raise FrameError("TrailingBytes: frame length mismatch")
    if crc32c(frame[:end]) != int.from_bytes(frame[end:end + 4], "little"):
        raise FrameError("checksum mismatch")
    payload = frame[at:end]
    header = dict(type=ftype, seed=seed, m=m, k=k, n=n, payload_len=plen)
    if ftype == 0:
        packed = bytes(payload)
        if m % 8 and packed[-1] >> (m % 8):
            raise FrameError("padding bits set")
        return header, packed
    if ftype in (2, 3):
        header["base_digest"] = int.from_bytes(payload[0:8], "little")
        header["result_digest"] = int.from_bytes(payload[8:16], "little")
    if ftype == 2:
        return header, decode_coded(payload[16:], m)
    if ftype == 3:
        # Section 3, type 3: base_ones, zeros_len, then the two parts. The
        # XOR needs the base to be placed, so return the parts' bits.
        ones, q = varint(payload, 16)
        zlen, q = varint(payload, q)
        if ones > m or q + zlen > len(payload):
            raise FrameError("part layout inconsistent")
        parts = []
        for bits, coded in ((m - ones, payload[q:q + zlen]), (ones, payload[q + zlen:])):
            if bits == 0:
                if len(coded) != 0:
                    raise FrameError("empty part with bytes")
                parts.append([])
            else:
                if len(coded) == 0:
                    raise FrameError("part with bits but no bytes")
                parts.append(decode_bits(coded, bits))
        header["base_ones"] = ones
        return header, parts
    return header, decode_coded(payload, m)


def decode_coded(payload: bytes, m: int) -> bytes:
    bits = decode_bits(payload, m)
    packed = bytearray((m + 7) // 8)
    for i, b in enumerate(bits):
        if b:
            packed[i // 8] |= 1 << (i % 8)
    return bytes(packed)


def decode_bits(payload: bytes, m: int) -> list:
    """A type 1 payload for an m-bit array, as a list of m bits."""
    nb = max(1, -(-m // (1 << 23)))
    lens, q = [], 0
    for _ in range(nb - 1):
        ln, q = varint(payload, q)
        lens.append(ln)
    bits = bytearray()
    for i in range(nb):
        B = min(m, (i + 1) << 23) - (i << 23)
        ln = lens[i] if i < nb - 1 else len(payload) - q
        if q + ln > len(payload):
            raise FrameError("block lengths exceed payload")
        bits += decode_block(payload[q:q + ln], B)
        q += ln
    return list(bits)


def static_byte_table(B: int, ones: int):
    """Section 3, type 4, mode 1: the 16-symbol nibble table (f, start) of a
    block of B bits with 0 < ones < B."""
    p = max(1, (ones << 32) // B)
    a, b = [1 << 32], [1 << 32]
    for _ in range(4):
        a.append((a[-1] * p) >> 32)
        b.append((b[-1] * ((1 << 32) - p)) >> 32)
    w = [(a[c] * b[4 - c]) >> 32 for c in range(5)]
    top = 0 if 2 * ones <= B else 15
    f = [0] * 16
    for v in range(16):
        if v != top:
            f[v] = max(1, (w[bin(v).count("1")] * 4096 + (1 << 31)) >> 32)
    f[top] = 4096 - sum(f)
    if not all(1 <= fv <= 4095 for fv in f):  # the spec says this cannot happen
        raise FrameError(f"internal: nibble table out of range {f}")
    start = [sum(f[:v]) for v in range(16)]
    return f, start


def decode_byte_block(stream: bytes, B: int, ones: int) -> bytes:
    """Section 3, type 4, mode 1: a block of B bits as ceil(B/8) packed bytes."""
    f, start = static_byte_table(B, ones)
    nibble = bytearray(4096)  # slot -> nibble
    for v in range(16):
        nibble[start[v]:start[v] + f[v]] = bytes([v]) * f[v]
    S = 8 if B >= (1 << 22) else 4 if B >= (1 << 20) else 2 if B >= (1 << 13) else 1
    if len(stream) < 8 * S:
        raise FrameError("UnexpectedEnd: truncated block states")
    x = [int.from_bytes(stream[8 * i:8 * i + 8], "little") for i in range(S)]
    if any(not (1 << 31) <= v < (1 << 63) for v in x):
        raise FrameError("BadState: initial state outside [2^31, 2^63)")
    rd = 8 * S
    nbytes = (B + 7) // 8
    out = bytearray(nbytes)
    for j in range(nbytes):
        lane = j % S
        v = x[lane]
        sh = (v >> 12) & 0xFFF
        sl = v & 0xFFF
        h, l = nibble[sh], nibble[sl]
        fl = f[l]
        v = f[h] * fl * (v >> 24) + (sh - start[h]) * fl + (sl - start[l])
        if v < (1 << 31):
            if rd + 4 > len(stream):
                raise FrameError("UnexpectedEnd: stream ends early")
            v = (v << 32) | int.from_bytes(stream[rd:rd + 4], "little")
            rd += 4
        x[lane] = v
        out[j] = (h << 4) | l
    if B % 8 and out[-1] >> (B % 8):
        raise FrameError("RunPastEnd: bits past the block's end are set")
    if rd != len(stream):
        raise FrameError("TrailingData: unread bytes in block stream")
    if any(v != (1 << 31) for v in x):
        raise FrameError("BadState: final state is not 2^31")
    return bytes(out)


_TO_ASCII = bytes.maketrans(b"\x00\x01", b"01")


def pack_bits(bits) -> bytes:
    """A sequence of 0/1 values as packed bytes (section 1 bit order)."""
    n = len(bits)
    if n == 0:
        return b""
    v = int(bytes(bits)[::-1].translate(_TO_ASCII), 2)
    return v.to_bytes((n + 7) // 8, "little")


def read_static_table(payload: bytes, m: int):
    """Section 3, type 4: block_log and the table, every entry checked
    (all failures BlockTable). Returns B_max and one (mode, ones, B, offset,
    length) per block, offset and length locating its stream in the payload."""
    if len(payload) < 1:
        raise FrameError("BlockTable: no block_log")
    block_log = payload[0]
    if not 16 <= block_log <= 40:
        raise FrameError(f"BlockTable: block_log {block_log} out of range")
    bmax = 1 << block_log
    nb = max(1, -(-m // bmax))
    q, entries = 1, []
    for i in range(nb):
        if q >= len(payload):
            raise FrameError(f"BlockTable: table runs past the payload (block {i})")
        mode = payload[q]
        q += 1
        if mode > 1:
            raise FrameError(f"BlockTable: block {i} mode {mode}")
        try:
            ones, q = varint(payload, q)
            ln = None
            if i < nb - 1:
                ln, q = varint(payload, q)
        except FrameError as e:
            raise FrameError(f"BlockTable: block {i}: {e}")
        B = min(m, (i + 1) * bmax) - i * bmax
        if ones > B:
            raise FrameError(f"BlockTable: block {i} ones {ones} > B {B}")
        entries.append([mode, ones, B, ln])
    for i, e in enumerate(entries):
        mode, ones, B, ln = e
        if ln is None:
            ln = len(payload) - q
        if q + ln > len(payload):
            raise FrameError(f"BlockTable: stream {i} runs past the payload")
        if (ones == 0 or ones == B) and (mode != 0 or ln != 0):
            raise FrameError(f"BlockTable: constant block {i} needs mode 0 and an empty stream")
        e[3:] = [q, ln]
        q += ln
    return bmax, [tuple(e) for e in entries]


def decode_static(payload: bytes, m: int) -> bytes:
    """A type 4 (static coded) payload for an m-bit array, as the packed
    array of section 1 (ceil(m/8) bytes, padding bits 0). Raises FrameError
    whose message starts with the error's name: BlockTable, CountMismatch,
    UnexpectedEnd, BadState, RunPastEnd or TrailingData. Blocks are decoded
    in order; the first failure is reported."""
    bmax, entries = read_static_table(payload, m)
    out = bytearray()
    for i, (mode, ones, B, off, ln) in enumerate(entries):
        stream = payload[off:off + ln]
        if ones == 0:
            block = bytes((B + 7) // 8)
        elif ones == B:
            block = b"\xff" * (B // 8) + (bytes([(1 << (B % 8)) - 1]) if B % 8 else b"")
        else:
            try:
                if mode == 0:
                    block = pack_bits(decode_block(stream, B, build_model(B, ones)))
                else:
                    block = decode_byte_block(stream, B, ones)
            except FrameError as e:
                raise FrameError(f"{e} (block {i})")
            got = int.from_bytes(block, "little").bit_count()
            if got != ones:
                raise FrameError(f"CountMismatch: block {i} has {got} ones, table says {ones}")
        out += block
    assert len(out) == (m + 7) // 8
    return bytes(out)


def put_varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def digest(header, packed: bytes) -> int:
    import xxhash
    head = bytes([1]) + put_varint(header["seed"]) + put_varint(header["m"]) + put_varint(header["k"])
    return xxhash.xxh3_64_intdigest(head + packed, seed=0)


def apply_delta(base_frame: bytes, delta_frame: bytes) -> bytes:
    bh, base = decode(base_frame)
    dh, xor = decode(delta_frame)
    if dh["type"] not in (2, 3) or bh["type"] in (2, 3):
        raise FrameError("need a full frame and a delta frame")
    if any(bh[f] != dh[f] for f in ("seed", "m", "k")):
        raise FrameError("parameters differ")
    if digest(bh, base) != dh["base_digest"]:
        raise FrameError("delta was made from another base")
    if dh["type"] == 3:
        # Place part 0's bits at the base's 0 positions and part 1's at its
        # 1 positions, each in increasing position order.
        m = dh["m"]
        base_bits = [(base[i // 8] >> (i % 8)) & 1 for i in range(m)]
        if sum(base_bits) != dh["base_ones"]:
            raise FrameError("base_ones differs from the base")
        take = [iter(xor[0]), iter(xor[1])]
        packed = bytearray((m + 7) // 8)
        for i, b in enumerate(base_bits):
            if next(take[b]):
                packed[i // 8] |= 1 << (i % 8)
        xor = bytes(packed)
    result = bytes(a ^ b for a, b in zip(base, xor))
    if digest(dh, result) != dh["result_digest"]:
        raise FrameError("result digest mismatch")
    return result


if __name__ == "__main__":
    assert crc32c(b"123456789") == 0xE3069283
    if len(sys.argv) == 4:
        out = apply_delta(open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read())
        open(sys.argv[3], "wb").write(out)
        print("applied")
        sys.exit(0)
    frame = open(sys.argv[1], "rb").read()
    header, packed = decode(frame)
    print(" ".join(f"{k}={v}" for k, v in header.items()))
    if len(sys.argv) > 2:
        open(sys.argv[2], "wb").write(packed)
