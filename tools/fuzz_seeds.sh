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
