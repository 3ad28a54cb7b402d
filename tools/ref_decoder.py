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


def decode_block(stream: bytes, B: int):
    bits = bytearray(B)  # one byte per bit, 0 or 1
    S = 4 if B >= (1 << 20) else 1
    if len(stream) < 4 * S:
        raise FrameError("truncated block states")
    x = [int.from_bytes(stream[4 * i:4 * i + 4], "little") for i in range(S)]
    if any(v < (1 << 16) for v in x):
        raise FrameError("initial state below 2^16")
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
                raise FrameError("stream ends early")
            v = (v << 16) | int.from_bytes(stream[rd:rd + 2], "little")
            rd += 2
        x[lane] = v
        lane = (lane + 1) % S
        return s

    pos, threshold = 0, 16
    model = build_model(0, 0)
    while True:
        if pos >= threshold:
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
                raise FrameError("escape past block end")
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
            raise FrameError("run past block end")
        for i in range(pos, pos + run):
            bits[i] = majority
        pos += run
        if pos == B:
            break
        bits[pos] = 1 - majority
        pos += 1
    if rd != len(stream):
        raise FrameError("unread bytes in block stream")
    if any(v != (1 << 16) for v in x):
        raise FrameError("final state is not 2^16")
    return bits


def decode(frame: bytes):
    if frame[:2] != MAGIC:
        raise FrameError("bad magic")
    if len(frame) < 6:
        raise FrameError("truncated")
    version, ftype, scheme, flags = frame[2], frame[3], frame[4], frame[5]
    if version not in (1, 2) or scheme != 1 or flags != 0:
        raise FrameError("unsupported header byte")
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
    if len(frame) != end + 4:
        raise FrameError("frame length mismatch")
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
