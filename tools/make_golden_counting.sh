#!/usr/bin/env bash
# Counting-kind golden vectors (docs/FORMAT.md section 8.1): frames built by
# the crate from the keys key-1..key-N, decoded by tools/ref_kinds.py
# (written from FORMAT.md alone) into NAME.nib (the raw counter nibbles),
# and cross-checked against the counters computed from the keys in Python
# (pip install xxhash). Golden vectors are a contract: rerun only with a
# format change, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/vectors
list="$out/golden_counting.txt"
echo "# name m k seed n (keys key-1..key-N; NAME.nib = counters, two per byte, low nibble first)" > "$list"
make() { # name m k seed n [--raw]
  local name=$1 m=$2 k=$3 seed=$4 n=$5 raw=${6:-}
  seq 1 "$n" | sed 's/^/key-/' | cargo run --quiet --bin cbloom -- build --type counting \
    --keys - --m "$m" --k "$k" --seed "$seed" $raw -o "$out/$name.cbf"
  python3 tools/ref_kinds.py decode "$out/$name.cbf" "$out/$name.nib"
  python3 tools/ref_kinds.py expect 1 "$m" "$k" "$seed" "$n" /tmp/expect.$$
  cmp "$out/$name.nib" /tmp/expect.$$
  rm -f /tmp/expect.$$
  echo "$name $m $k $seed $n" >> "$list"
}
make v3_counting_coded 3000 3 5 200
make v3_counting_rawmap 4000 2 2 1386
make v3_counting_sat 16 1 3 300
make v3_counting_raw   17   2 0 5 --raw
# The delta from key-1..key-200 to key-51..key-260 (keys removed and
# added): the reference applies it to the first and compares the counters
# with those computed from the second's keys.
seq 51 260 | sed 's/^/key-/' | cargo run --quiet --bin cbloom -- build --type counting \
  --keys - --m 3000 --k 3 --seed 5 -o /tmp/new.$$.cbf
cargo run --quiet --bin cbloom -- delta "$out/v3_counting_coded.cbf" /tmp/new.$$.cbf -o "$out/v3_counting_delta.cbf"
rm -f /tmp/new.$$.cbf
python3 tools/ref_kinds.py apply-counting "$out/v3_counting_coded.cbf" "$out/v3_counting_delta.cbf" "$out/v3_counting_delta.nib"
python3 - "$out/v3_counting_delta.nib" <<'PY'
import sys
sys.path.insert(0, "tools")
import ref_kinds as rk
counts = [0] * 3000
for j in range(51, 261):
    for p in set(rk.key_positions(f"key-{j}".encode(), 5, 3000, 3, False)):
        counts[p] = min(15, counts[p] + 1)
want = bytearray(1500)
for i, c in enumerate(counts):
    want[i // 2] |= c << (4 * (i % 2))
assert open(sys.argv[1], "rb").read() == bytes(want), "delta result differs from the keys' counters"
PY
echo "v3_counting_delta 3000 3 5 delta" >> "$list"
echo "counting goldens written and cross-checked"
