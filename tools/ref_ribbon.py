#!/usr/bin/env python3
"""A reference decoder and query for ribbon frames (kind 5), written from
docs/FORMAT.md sections 2.2 and 8.5 alone: it shares no code with the crate.

    python3 tools/ref_ribbon.py query FRAME KEYS OUT [MEMBERS]
        # decodes FRAME, writes one line per key of KEYS (one per line):
        # "1" present, "0" absent; with MEMBERS (a count N), checks that
        # the first N keys are present. Needs XXH3 (pip install xxhash).

Prints the header fields and the prefix.
"""
import sys

import ref_decoder as rd

M64 = (1 << 64) - 1
M128 = (1 << 128) - 1


def mix(x: int) -> int:
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & M64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & M64
    x ^= x >> 33
    return x


def decode(frame: bytes):
    if frame[:2] != rd.MAGIC or len(frame) < 7:
        raise rd.FrameError("bad magic or truncated")
    version, ftype, scheme, flags, kind = frame[2:7]
    if version != 3 or scheme != 1 or flags != 0 or kind != 5:
        raise rd.FrameError("not a plain version-3 ribbon frame")
    if ftype in (2, 3):
        raise rd.FrameError("WrongFrameType: the ribbon kind has no delta")
    if ftype != 0:
        raise rd.FrameError("the ribbon kind has type 0 only")
    at = 7
    seed, at = rd.varint(frame, at)
    m, at = rd.varint(frame, at)
    r, at = rd.varint(frame, at)
    n, at = rd.varint(frame, at)
    plen, at = rd.varint(frame, at)
    if not (1 <= m <= 1 << 56) or not (1 <= r <= 64):
        raise rd.FrameError("m or k out of range")
    B = (m + 127) // 128
    if plen < 16 * (B - 1) * r + (m - 128 * (B - 1) + 7) // 8 * r + 6:
        raise rd.FrameError("payload too short for the parameters")
    end = at + plen
    if len(frame) != end + 4:
        raise rd.FrameError("frame length mismatch")
    if rd.crc32c(frame[:end]) != int.from_bytes(frame[end:end + 4], "little"):
        raise rd.FrameError("checksum mismatch")
    p = frame[at:end]
    if p[0] != 128:
        raise rd.FrameError("band width")
    q = 1
    U, q = rd.varint(p, q)
    if U > B or (r == 64 and U > 0):
        raise rd.FrameError("upper blocks")
    S, q = rd.varint(p, q)
    if not 1 <= S <= (len(p) - q) // 2:
        raise rd.FrameError("shard count")
    shards, first = [], 0
    for _ in range(S):
        rows, q = rd.varint(p, q)
        if 0 < rows < 128:
            raise rd.FrameError("shard rows")
        c = p[q]
        q += 1
        shards.append((first, rows, c))
        first += rows
        if first > m:
            raise rd.FrameError("row sum")
    if first != m:
        raise rd.FrameError("row sum")
    # Every block's words are 16 bytes but the last block's, which hold
    # only the bytes of its rows below m.
    whole = (B - 1) * r + max(0, U - 1)
    last_cols = r + (1 if U > 0 else 0)
    cut = (m - 128 * (B - 1) + 7) // 8
    if len(p) - q != 16 * whole + cut * last_cols:
        raise rd.FrameError("solution length")
    words = [int.from_bytes(p[q + 16 * i:q + 16 * i + 16], "little") for i in range(whole)]
    q += 16 * whole
    words += [int.from_bytes(p[q + cut * i:q + cut * i + cut], "little") for i in range(last_cols)]
    return dict(seed=seed, m=m, r=r, n=n, B=B, U=U, shards=shards, words=words)


def contains(f, key: bytes) -> bool:
    import xxhash
    h = xxhash.xxh3_128_intdigest(key, seed=f["seed"])
    h1, h2 = h & M64, h >> 64
    S = len(f["shards"])
    first, rows, c = f["shards"][(h1 * S) >> 64]
    if rows == 0:
        return False
    t = rows - 127
    z = h2 ^ (((c + 1) * 0xD6E8FEB86659FD93) & M64)
    v = [mix((z + j * 0x9E3779B97F4A7C15) & M64) for j in range(4)]
    s = (v[0] * t) >> 64
    a = v[1] | (v[2] << 64) | 1
    p = v[3]
    B, U, r = f["B"], f["U"], f["r"]
    x = first + s
    g = x // 128
    o = x % 128
    cols = r if g < B - U else r + 1

    def W(g):
        return g * r + max(0, g - (B - U))

    for j in range(cols):
        bit = bin(((a << o) & M128) & f["words"][W(g) + j]).count("1") & 1
        if o > 0:
            bit ^= bin((a >> (128 - o)) & f["words"][W(g + 1) + j]).count("1") & 1
        if bit != (p >> j) & 1:
            return False
    return True


def main(argv):
    if len(argv) < 5 or argv[1] != "query":
        print(__doc__)
        return 2
    f = decode(open(argv[2], "rb").read())
    keys = open(argv[3], "rb").read().split(b"\n")
    if keys and keys[-1] == b"":
        keys.pop()
    answers = [contains(f, k) for k in keys]
    open(argv[4], "w").write("".join("1\n" if a else "0\n" for a in answers))
    if len(argv) > 5:
        members = int(argv[5])
        assert all(answers[:members]), "a member is absent"
    print(f"seed {f['seed']} m {f['m']} r {f['r']} n {f['n']} blocks {f['B']} upper {f['U']} "
          f"shards {len(f['shards'])}: {sum(answers)} of {len(answers)} present")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
