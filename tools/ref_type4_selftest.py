#!/usr/bin/env python3
"""Self-test of the type 4 (static coded) reference decoder of
tools/ref_decoder.py, with a small encoder written from docs/FORMAT.md
(section 3, "Type 4", its informative "Encoding" paragraph, and section 3.4
for mode 0). It round-trips random bit arrays in both modes, checks that
malformed payloads fail with the right error name, and that whole frames
go through tools/ref_kinds.py's decode_v3 (kinds 0 and 2) and are refused
where the format says so.

    python3 tools/ref_type4_selftest.py          # prints one summary line; exit 1 on failure
"""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_decoder as rd  # noqa: E402
import ref_kinds as rk  # noqa: E402


# ---- encoder ---------------------------------------------------------------

def encode_runs(bits, B, ones):
    """Mode 0: section 3.4 with the fixed model build(B, ones), no schedule."""
    model = rd.build_model(B, ones)
    f, start, t, L = model["f"], model["start"], model["t"], model["L"]
    minority = 1 if model["minority_is_one"] else 0
    esc = model["escape_len"]
    mins = [i for i in range(B) if bits[i] == minority]
    steps, pos, k = [], 0, 0
    while True:
        nxt = mins[k] if k < len(mins) else B
        run = nxt - pos
        if run >= esc:
            steps.append((f[L], start[L]))
            pos += esc
            continue
        steps.append((f[run >> t], start[run >> t]))
        low, width = run & ((1 << t) - 1), t
        while width > 0:
            c = min(width, 12)
            fu = 1 << (12 - c)
            v = low & ((1 << c) - 1)
            steps.append((fu, v * fu))
            low >>= c
            width -= c
        if nxt == B:
            break
        pos, k = nxt + 1, k + 1
    S = 4 if B >= (1 << 20) else 1
    x = [1 << 16] * S
    words = []
    for j in range(len(steps) - 1, -1, -1):
        fj, sj = steps[j]
        lane = j % S
        v = x[lane]
        if v >= fj << 20:
            words.append(v & 0xFFFF)
            v >>= 16
        x[lane] = (v // fj) * 4096 + (v % fj) + sj
    out = bytearray()
    for v in x:
        out += v.to_bytes(4, "little")
    for w in reversed(words):
        out += w.to_bytes(2, "little")
    return bytes(out)


def nibble_table(B, ones):
    """Mode 1's table, written again here (not shared with the decoder)."""
    Q = 1 << 32
    p = ones * Q // B or 1
    pw1, pw0 = [Q], [Q]  # Q32 powers of p and of 1 - p
    while len(pw1) < 5:
        pw1.append(pw1[-1] * p // Q)
        pw0.append(pw0[-1] * (Q - p) // Q)
    top = 15 if 2 * ones > B else 0
    f = {}
    for v in range(16):
        c = (v & 1) + (v >> 1 & 1) + (v >> 2 & 1) + (v >> 3 & 1)
        if v != top:
            f[v] = max(1, (pw1[c] * pw0[4 - c] // Q * 4096 + Q // 2) // Q)
    f[top] = 4096 - sum(f.values())
    freq, start, acc = [], [], 0
    for v in range(16):
        freq.append(f[v])
        start.append(acc)
        acc += f[v]
    return freq, start


def pack(bits):
    out = bytearray((len(bits) + 7) // 8)
    for i, b in enumerate(bits):
        if b:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


def encode_bytes(packed, B, ones):
    """Mode 1: the bytes in reverse order, byte j on lane j mod S."""
    f, start = nibble_table(B, ones)
    S = 8 if B >= (1 << 22) else 4 if B >= (1 << 20) else 2 if B >= (1 << 13) else 1
    x = [1 << 31] * S
    words = []
    for j in range((B + 7) // 8 - 1, -1, -1):
        h, l = packed[j] >> 4, packed[j] & 15
        fh, fl = f[h], f[l]
        F = fh * fl
        lane = j % S
        v = x[lane]
        if v >= F << 39:
            words.append(v & 0xFFFFFFFF)
            v >>= 32
        q, r = divmod(v, F)
        x[lane] = (q << 24) + ((start[h] + r // fl) << 12) + start[l] + r % fl
    out = bytearray()
    for v in x:
        out += v.to_bytes(8, "little")
    for w in reversed(words):
        out += w.to_bytes(4, "little")
    return bytes(out)


def encode_static(bits, block_log=None, mode=None):
    """A type 4 payload for the bit list `bits`. mode None picks as the
    crate does (1 when the minority density is at least 1/16); block_log
    None picks as the crate does (23, or larger while blocks would carry
    less than 2^16 coded bytes each; the coded size per block is estimated
    here by coding with 23 first)."""
    m = len(bits)
    if block_log is None:
        block_log = 23
        while block_log < 40:
            bmax = 1 << block_log
            nb = max(1, -(-m // bmax))
            size = len(encode_static(bits, block_log, mode))
            if nb == 1 or size // nb >= 1 << 16:
                break
            block_log += 1
    bmax = 1 << block_log
    nb = max(1, -(-m // bmax))
    table, streams = bytearray([block_log]), []
    for i in range(nb):
        blk = bits[i * bmax:min(m, (i + 1) * bmax)]
        B, ones = len(blk), sum(blk)
        if ones in (0, B):
            md, st = 0, b""
        else:
            md = mode if mode is not None else (1 if 16 * min(ones, B - ones) >= B else 0)
            st = encode_runs(blk, B, ones) if md == 0 else encode_bytes(pack(blk), B, ones)
        table.append(md)
        table += rd.put_varint(ones)
        if i < nb - 1:
            table += rd.put_varint(len(st))
        streams.append(st)
    return bytes(table) + b"".join(streams)


def frame_v3(payload, m, k=1, seed=0, n=0, kind=0, ftype=4, version=3):
    if version == 3:
        head = b"\xcb\xf1" + bytes([3, ftype, 1, 0, kind])
    else:
        head = b"\xcb\xf1" + bytes([version, ftype, 1, 0])
    for v in (seed, m, k, n, len(payload)):
        head += rd.put_varint(v)
    body = head + payload
    return body + rd.crc32c(body).to_bytes(4, "little")


# ---- tests -----------------------------------------------------------------

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def expect_error(payload, m, name, what):
    try:
        rd.decode_static(payload, m)
    except rd.FrameError as e:
        check(str(e).startswith(name), f"{what}: expected {name}, got {e}")
        return
    check(False, f"{what}: expected {name}, decoded fine")


def decodes_to(payload, m, want):
    try:
        return rd.decode_static(payload, m) == want
    except rd.FrameError as e:
        print("decode error:", e)
        return False


def random_bits(rng, m, density):
    if density == 0:
        return [0] * m
    if density == 1:
        return [1] * m
    return [1 if rng.random() < density else 0 for _ in range(m)]


def tables(rng):
    """The decoder's mode-1 table against this file's, over many densities."""
    count = 0
    cases = [(8, 1), (8, 4), (8, 5), (8, 7), (1000, 500), (1000, 501), (8191, 4095), (8191, 4096),
             (1 << 40, (1 << 39) + 1), (1 << 40, 1), (1 << 40, (1 << 40) - 1), (13, 6), (13, 7)]
    cases += [(B, rng.randrange(1, B)) for B in (rng.randrange(2, 1 << 41) for _ in range(3000))]
    for B, ones in cases:
        got = rd.static_byte_table(B, ones)
        want = nibble_table(B, ones)
        check(got == (want[0], want[1]), f"nibble table B={B} ones={ones}")
        check(all(1 <= v <= 4095 for v in want[0]) and sum(want[0]) == 4096, f"table range B={B} ones={ones}")
        count += 1
    return count


def roundtrips(rng):
    count = 0
    sizes = [1, 7, 100, 8191, 8192, 70000, 140001, (1 << 20) + 13]
    dens = [0, 1e-3, 0.05, 0.2, 0.5, 0.8, 1]
    for m in sizes:
        for d in dens:
            bits = random_bits(rng, m, d)
            want = pack(bits)
            logs = [16, 17] if m < (1 << 20) else [16, 17, 21]
            for bl in logs:
                for mode in (0, 1):
                    p = encode_static(bits, bl, mode)
                    check(decodes_to(p, m, want), f"round trip m={m} d={d} block_log={bl} mode={mode}")
                    count += 1
    # The crate's own choices, and a 2^20-bit block (8 lanes in mode 1, 4 in mode 0).
    for m, d in ((300000, 0.01), (300000, 0.3), ((1 << 20) + 13, 0.3), ((1 << 20) + 13, 0.01)):
        bits = random_bits(rng, m, d)
        p = encode_static(bits, 21 if m > 1 << 20 else None)
        check(decodes_to(p, m, pack(bits)), f"auto round trip m={m} d={d}")
        count += 1
    # Run-coder edges with the fixed model: an escape ending exactly at B,
    # a minority bit at B - 1, t > 12 (two uniform chunks).
    for m, ones in ((5000, [4999]), (5000, [0, 4999]), (70000, [3]), (65536, [65535]),
                    ((1 << 18), [17, 200000]), (8, [7]), (9, [8])):
        bits = [0] * m
        for o in ones:
            bits[o] = 1
        for bl in (16, 17):
            p = encode_static(bits, bl, 0)
            check(decodes_to(p, m, pack(bits)), f"edge m={m} ones={ones} bl={bl}")
            count += 1
    # An escape that ends exactly at the block's end (then one bucket-0
    # symbol), with 1s and with 0s as the minority; and t > 12, whose low
    # bits take a 12-bit and then a shorter uniform step.
    for B, c in ((5000, 5), (65536, 4), (70000, 6), (1 << 20, 9)):
        esc = rd.build_model(B, c)["escape_len"]
        for minority in (1, 0):
            bits = [1 - minority] * B
            for i in range(B - esc - c, B - esc):
                bits[i] = minority
            ones = sum(bits)
            check(rd.build_model(B, ones)["escape_len"] == esc, "escape edge model")
            p = encode_static(bits, 20 if B <= 1 << 20 else 21, 0)
            check(decodes_to(p, B, pack(bits)), f"escape at end B={B} minority={minority}")
            count += 1
    for B, where in (((1 << 20) + 13, [777777]), ((1 << 22) + 5, [3, 4000000])):
        check(rd.build_model(B, len(where))["t"] > 12, "t > 12")
        for minority in (1, 0):
            bits = [1 - minority] * B
            for i in where:
                bits[i] = minority
            p = encode_static(bits, 23, 0)
            check(decodes_to(p, B, pack(bits)), f"t>12 B={B} minority={minority}")
            count += 1
    return count


def malformed(rng):
    count = 0
    m = 20000
    bits = random_bits(rng, m, 0.2)
    good1 = encode_static(bits, 16, 1)  # blocks 65536: one block
    good0 = encode_static(bits, 16, 0)
    mm = 150000  # three blocks at block_log 16
    bits3 = random_bits(rng, mm, 0.1)
    good3 = encode_static(bits3, 16, 1)
    cases = [
        (b"", m, "BlockTable", "empty payload"),
        (bytes([15]) + good1[1:], m, "BlockTable", "block_log 15"),
        (bytes([41]) + good1[1:], m, "BlockTable", "block_log 41"),
        (good1[:1] + bytes([2]) + good1[2:], m, "BlockTable", "mode 2"),
        (bytes([16, 0]), m, "BlockTable", "table ends inside an entry"),
        (bytes([16, 0, 0x80]), m, "BlockTable", "ones varint truncated"),
        (bytes([16, 0, 0x81, 0x00]), 5, "BlockTable", "ones varint not shortest"),
        (bytes([16, 0]) + rd.put_varint(m + 1), m, "BlockTable", "ones > B"),
        (bytes([16, 1, 0]), m, "BlockTable", "constant block in mode 1"),
        (bytes([16, 0, 0, 0]), m, "BlockTable", "constant block with a stream"),
        (bytes([16, 0]) + rd.put_varint(m) + b"\x00", m, "BlockTable", "full block with a stream"),
        (good3[:3] + b"\xff\xff\x03" + good3[6:], mm, "BlockTable", "stream length past the end"),
        (good1[:-1], m, "UnexpectedEnd", "mode 1 stream cut by a byte"),
        (good1[:8], m, "UnexpectedEnd", "mode 1 states cut"),
        (good0[:6], m, "UnexpectedEnd", "mode 0 states cut"),
        (good0[:-2], m, "UnexpectedEnd", "mode 0 stream cut by a word"),
        (good1 + b"\x00\x00\x00\x00", m, "TrailingData", "mode 1 extra word"),
        (good1 + b"\x00", m, "TrailingData", "mode 1 extra byte"),
        (good0 + b"\x00\x00", m, "TrailingData", "mode 0 extra word"),
        (good0 + b"\x00", m, "TrailingData", "mode 0 odd byte"),
    ]
    # An initial state out of range, each mode.
    hdr1 = len(good1) - len(encode_bytes(pack(bits), m, sum(bits)))
    bad = bytearray(good1)
    bad[hdr1:hdr1 + 8] = ((1 << 31) - 1).to_bytes(8, "little")
    cases.append((bytes(bad), m, "BadState", "mode 1 initial state below 2^31"))
    bad[hdr1:hdr1 + 8] = (1 << 63).to_bytes(8, "little")
    cases.append((bytes(bad), m, "BadState", "mode 1 initial state 2^63"))
    hdr0 = len(good0) - len(encode_runs(bits, m, sum(bits)))
    bad0 = bytearray(good0)
    bad0[hdr0:hdr0 + 4] = (0xFFFF).to_bytes(4, "little")
    cases.append((bytes(bad0), m, "BadState", "mode 0 initial state below 2^16"))
    # A wrong count: the same stream with ones off by one (the table is
    # rebuilt, so it decodes to something; either it fails in the coder or
    # its count does not match). With a single 1 bit the mode-1 stream of
    # a block stays decodable and only the count is wrong.
    for md in (0, 1):
        b2 = [0] * 8192
        b2[100] = 1
        b2[5000] = 1
        p = encode_static(b2, 16, md)
        # replace ones=2 by ones=3: same varint length
        p2 = p[:2] + rd.put_varint(3) + p[3:]
        try:
            rd.decode_static(p2, 8192)
            check(False, f"mode {md} ones+1 decoded")
        except rd.FrameError as e:
            check(str(e).split(":")[0] in ("CountMismatch", "BadState", "TrailingData",
                                         "UnexpectedEnd", "RunPastEnd"),
                  f"mode {md} ones+1: {e}")
        count += 1
    # An exact CountMismatch: a mode-1 block whose stream codes 3 ones but
    # whose table says 2 is built by encoding with the table of 2.
    b3 = [0] * 8192
    for i in (1, 2, 3):
        b3[i] = 1
    st = encode_bytes(pack(b3), 8192, 2)
    cases.append((bytes([16, 1]) + rd.put_varint(2) + st, 8192, "CountMismatch", "mode 1 count"))
    st0 = encode_runs(b3, 8192, 2)
    cases.append((bytes([16, 0]) + rd.put_varint(2) + st0, 8192, "CountMismatch", "mode 0 count"))
    # Padding bits past B in mode 1: m = 8190, the last byte's top 2 bits.
    b4 = [0] * 8192
    b4[8191] = 1
    b4[3] = 1
    st = encode_bytes(pack(b4), 8190, 2)
    cases.append((bytes([16, 1]) + rd.put_varint(2) + st, 8190, "RunPastEnd", "mode 1 padding bit"))
    # A run past the end in mode 0: code 8192 bits and claim 8190.
    b5 = [0] * 8192
    b5[8191] = 1
    b5[10] = 1
    st = encode_runs(b5, 8192, 2)
    try:
        rd.decode_static(bytes([16, 0]) + rd.put_varint(2) + st, 8190)
        check(False, "mode 0 longer block decoded")
    except rd.FrameError as e:
        check(str(e).split(":")[0] in ("RunPastEnd", "TrailingData", "BadState", "CountMismatch"),
              f"mode 0 longer block: {e}")
    count += 1
    for payload, mlen, name, what in cases:
        expect_error(payload, mlen, name, what)
        count += 1
    return count


def frames(rng):
    count = 0
    m, k = 4000, 4
    bits = random_bits(rng, m, 0.1)
    packed = pack(bits)
    p = encode_static(bits, 16, 1)
    for kind in (0, 2):
        h, out = rk.decode_v3(frame_v3(p, m, k=k, kind=kind))
        check(out == packed and h["type"] == 4 and h["kind"] == kind, f"frame kind {kind}")
        count += 1
    refused = [
        (frame_v3(p, m, kind=1), "counting type 4"),
        (frame_v3(p, m, kind=3), "scalable type 4"),
        (frame_v3(p, m, kind=4), "sparse type 4"),
        (frame_v3(p, 4001, k=4, kind=2), "partitioned m not a multiple of k"),
        (frame_v3(b"\x10", m), "payload_len 1"),
        (frame_v3(b"", m), "payload_len 0"),
        (frame_v3(p + bytes(500 - len(p)), m), "payload_len = ceil(m/8)"),
        (frame_v3(p, m, version=1), "type 4 in version 1"),
        (frame_v3(p, m, version=2), "type 4 in version 2"),
    ]
    for fr, what in refused:
        try:
            (rd.decode if fr[2] != 3 else rk.decode_v3)(fr)
            check(False, f"{what}: accepted")
        except rd.FrameError:
            pass
        count += 1
    # payload_len 2 fails step 4 (a type-4 payload holds at least 3 bytes).
    try:
        rk.decode_v3(frame_v3(b"\x10\x00", m))
        check(False, "2-byte payload accepted")
    except rd.FrameError as e:
        check("payload length" in str(e), f"2-byte payload: {e}")
    count += 1
    # The smallest valid type 4 frame: an all-zero filter, 3-byte payload, m = 25.
    h, out = rk.decode_v3(frame_v3(bytes([16, 0, 0]), 25))
    check(out == bytes(4), "m=25 empty")
    count += 1
    # Type 1 behaviour unchanged: the golden version-1 frame of section 7.
    g = bytes.fromhex("cbf10101010000e80701000a7ffeee00acff5ecf1e022e720b1d")
    h, out = rd.decode(g)
    want = bytearray(125)
    for i in (3, 500, 999):
        want[i // 8] |= 1 << (i % 8)
    check(out == bytes(want), "golden v1 coded frame")
    count += 1
    return count


def main():
    t0 = time.time()
    rng = random.Random(4)
    n = tables(rng) + roundtrips(rng) + malformed(rng) + frames(rng)
    dt = time.time() - t0
    status = "FAIL" if FAILS else "ok"
    print(f"type 4 self-test: {n - len(FAILS)}/{n} checks passed ({len(FAILS)} failed) in {dt:.1f}s: {status}")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
