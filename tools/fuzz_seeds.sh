#!/usr/bin/env bash
# Seeds for the fuzz targets: the golden frames, and for
# delta_payload_arbitrary real deltas against its fixed base (m = 4096,
# k = 3, seed = 7, keys key-0..key-199), cut to that target's input layout:
# type byte (0 plain, 1 conditional), result digest, payload after digests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin cbloom
bin=target/debug/cbloom
c=fuzz/corpus
mkdir -p "$c/decode_arbitrary" "$c/apply_arbitrary" "$c/delta_payload_arbitrary"
cp tests/vectors/*.cbf "$c/decode_arbitrary/"
cp tests/vectors/*delta_*.cbf "$c/apply_arbitrary/"
# bip37_import: Bitcoin Core's filterload payload and a wallet-sized one.
mkdir -p "$c/bip37_import"
cp tests/vectors/bip37_*.filterload "$c/bip37_import/"
tmp=$(mktemp -d)
seq 0 199 | sed 's/^/key-/' | $bin build --keys - --m 4096 --k 3 --seed 7 -o "$tmp/base.cbf" 2>/dev/null
i=0
for range in "0 199" "10 209" "0 149" "100 400" "0 0" "5000 5200"; do
  seq $range | sed 's/^/key-/' | $bin build --keys - --m 4096 --k 3 --seed 7 -o "$tmp/new.cbf" 2>/dev/null
  for kind in plain conditional; do
    $bin delta --type "$kind" "$tmp/base.cbf" "$tmp/new.cbf" -o "$tmp/d.cbf" 2>/dev/null
    python3 - "$tmp/d.cbf" "$kind" "$c/delta_payload_arbitrary/seed_$i" <<'PY'
import sys
frame = open(sys.argv[1], "rb").read()
at = 6
for _ in range(5):  # seed, m, k, n, payload_len
    while frame[at] & 0x80:
        at += 1
    at += 1
payload = frame[at:-4]
ty = b"\x01" if sys.argv[2] == "conditional" else b"\x00"
open(sys.argv[3], "wb").write(ty + payload[8:16] + payload[16:])
PY
    i=$((i + 1))
  done
done
rm -rf "$tmp"
echo "fuzz seeds: $(ls "$c/delta_payload_arbitrary" | wc -l) delta payloads"

# payload_behind_header: real payloads after the target's config byte
# (the index into its CONFIGS table), cut from frames built at those m, k.
mkdir -p "$c/payload_behind_header" "$c/subscriber_sequence"
tmp=$(mktemp -d)
seq 0 49999 | sed 's/^/key-/' > "$tmp/keys"
cut_payload() { # frame config out
  python3 - "$1" "$2" "$3" <<'PY'
import sys
frame = open(sys.argv[1], "rb").read()
at = 7 if frame[2] == 3 else 6
for _ in range(5):  # seed, m, k, n, payload_len
    while frame[at] & 0x80:
        at += 1
    at += 1
open(sys.argv[3], "wb").write(bytes([int(sys.argv[2])]) + frame[at:-4])
PY
}
i=0
for spec in "1 standard 70000 3" "2 standard 1048576 4" "3 standard 8392704 2" "5 partitioned 1048576 4" "6 counting 100000 3"; do
  set -- $spec
  $bin build --type "$2" --keys "$tmp/keys" --m "$3" --k "$4" -o "$tmp/f.cbf" 2>/dev/null
  cut_payload "$tmp/f.cbf" "$1" "$c/payload_behind_header/seed_$i"
  i=$((i + 1))
done
# Type-4 (static-coded) payloads for the target's type-4 configs.
for spec in "15 standard 5000 2 300" "16 standard 100000 3 5000" "17 standard 1048576 4 50000" "18 standard 3149832 2 50000" "19 partitioned 1048576 4 50000"; do
  set -- $spec
  head -n "$5" "$tmp/keys" | $bin build --type "$2" --keys - --m "$3" --k "$4" --static -o "$tmp/f.cbf" 2>/dev/null
  cut_payload "$tmp/f.cbf" "$1" "$c/payload_behind_header/seed_$i"
  i=$((i + 1))
done
rm -rf "$tmp"
# subscriber_sequence: inserts and publishes, with drops, replays and cuts.
printf '\x00\x01\x03\x00\x00\x02\x03\x00\x04\x00\x03\x00' > "$c/subscriber_sequence/seed_0"
printf '\x00\x05\x03\x00\x01\x07\x03\x00\x05\x00\x06\x09\x07\x30\x03\x00\x03\x00\x03\x00\x03\x00' > "$c/subscriber_sequence/seed_1"
echo "fuzz seeds: $(ls "$c/payload_behind_header" | wc -l) payloads, $(ls "$c/subscriber_sequence" | wc -l) sequences"

# ribbon_decode: inputs in the target's `Input` layout as the arbitrary
# crate reads it (m − 1: u16 LE, k − 1: u8, n: u32 LE, seed: u64 LE, then
# each payload byte behind a 1 and a 0 to end the payload; no queries).
# seed_0: one 128-row shard and 20,000 shards of no rows, the shard table
# as large as a payload can make it (2 bytes a shard): the decoder holds
# one 24-byte record per shard, within the 16 bytes per payload byte the
# limits count.
mkdir -p "$c/signed_frames"
cp tests/vectors/*.cbf "$c/signed_frames/"
mkdir -p "$c/ribbon_decode"
python3 - "$c/ribbon_decode/seed_0" <<'PY'
import struct, sys
def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)
empty = 20000
payload = bytes([128, 0]) + varint(empty + 1) + varint(128) + b"\0" + b"\0" * (2 * empty) + b"\0" * 16
data = struct.pack("<HBIQ", 127, 0, 0, 0)
data += b"".join(b"\x01" + bytes([b]) for b in payload) + b"\x00"
open(sys.argv[1], "wb").write(data)
PY
echo "fuzz seeds: $(ls "$c/ribbon_decode" | wc -l) ribbon payloads"
