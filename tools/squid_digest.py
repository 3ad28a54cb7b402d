#!/usr/bin/env python3
"""An independent Squid cache digest writer and reader, from Squid's source
(src/PeerDigest.h, src/CacheDigest.cc, src/store_digest.cc,
src/store_key_md5.cc), for the crate's test vectors. It shares no code with
the crate.

  squid_digest.py build CAPACITY BPE URLS OUT      digest of the URLs (GET)
  squid_digest.py query DIGEST URLS                 one line per URL: 1 or 0
"""
import hashlib
import struct
import sys

GET = 1
MAX_MASK = 268435454


def mask_size(cap, bpe):
    return min((cap * bpe + 7) // 8, MAX_MASK)


def positions(url, bit_count, method=GET):
    key = hashlib.md5(bytes([method]) + url).digest()
    return [w % bit_count for w in struct.unpack(">4I", key)]


def build(cap, bpe, urls):
    size = mask_size(cap, bpe)
    mask = bytearray(size)
    for u in urls:
        for p in positions(u, size * 8):
            mask[p >> 3] |= 1 << (p & 7)
    # StoreDigestCBlock: ver.current, ver.required (shorts), capacity,
    # count, del_count, mask_size (ints), bits_per_entry, hash_func_count,
    # reserved short, 26 reserved ints; network byte order.
    head = struct.pack(">hhiiiiBBh", 5, 3, cap, len(urls), 0, size, bpe, 4, 0) + bytes(104)
    assert len(head) == 128
    return head + bytes(mask)


def query(digest, url):
    size = struct.unpack(">i", digest[16:20])[0]
    mask = digest[128:]
    return all(mask[p >> 3] >> (p & 7) & 1 for p in positions(url, size * 8))


def lines(path):
    with open(path, "rb") as f:
        return [l.rstrip(b"\n") for l in f]


if __name__ == "__main__":
    if sys.argv[1] == "build":
        cap, bpe = int(sys.argv[2]), int(sys.argv[3])
        open(sys.argv[5], "wb").write(build(cap, bpe, lines(sys.argv[4])))
    elif sys.argv[1] == "query":
        d = open(sys.argv[2], "rb").read()
        for u in lines(sys.argv[3]):
            print(1 if query(d, u) else 0)
