#!/usr/bin/env bash
# Regenerates the version-3 golden vectors (tests/vectors/v3_*): frames
# written by tools/vectors/src/bin/golden_v3.rs, decoded by tools/ref_kinds.py
# (written from docs/FORMAT.md alone) into NAME.bits (packed bits) or
# NAME.pos (positions), and cross-checked against the same filter computed
# from its keys in Python with XXH3 (pip install xxhash). Golden vectors are
# a contract: rerun only with a format change, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/vectors
cargo run --quiet --release --manifest-path tools/vectors/Cargo.toml --bin golden_v3 -- "$out"
list="$out/golden_v3.txt"
echo "# name kind m k seed n (keys key-1..key-N; deltas: v3_ident_delta gives key-51..key-1050 applied to v3_ident_full, v3_sparse_delta gives key-51..key-350 applied to v3_sparse_dense)" > "$list"
check() { # name kind m k seed n ext
  local name=$1 kind=$2 m=$3 k=$4 seed=$5 n=$6 ext=$7
  python3 tools/ref_kinds.py decode "$out/$name.cbf" "$out/$name.$ext"
  python3 tools/ref_kinds.py expect "$kind" "$m" "$k" "$seed" "$n" /tmp/expect.$$
  cmp "$out/$name.$ext" /tmp/expect.$$
  rm -f /tmp/expect.$$
  echo "$name $kind $m $k $seed $n" >> "$list"
}
check v3_part_k3      2 3000          3 5 200 bits
check v3_part_raw     2 96            4 1 30  bits
check v3_sparse_k1    4 1099511627776 1 2 500 pos
check v3_sparse_empty 4 1000          2 0 0   pos
check v3_sparse_dense 4 5000          2 3 300 pos
check v3_ident_full   0 14000         2 0 1000 bits
check v3_ident_sparse 4 5000          2 3 300 pos
check v3_ident_part   2 3000          3 5 200 bits
# The identity of the three full frames that carry one.
python3 - "$out" <<'PY'
import sys
sys.path.insert(0, "tools")
import ref_kinds as rk
for name in ("v3_ident_full", "v3_ident_sparse", "v3_ident_part"):
    h, _ = rk.decode_v3(open(f"{sys.argv[1]}/{name}.cbf", "rb").read())
    assert (h["stream"], h["epoch"], h["seq"]) == (7, 3, 0), name
PY
# The delta: the reference applies it (v2 logic) to the identified base.
python3 - "$out" <<'PY'
import sys
sys.path.insert(0, "tools")
import ref_decoder as rd, ref_kinds as rk
out = sys.argv[1]
bh, base = rk.decode_v3(open(f"{out}/v3_ident_full.cbf", "rb").read())
dh, xor = rk.decode_v3(open(f"{out}/v3_ident_delta.cbf", "rb").read())
assert (bh["stream"], bh["epoch"], bh["seq"]) == (7, 3, 0)
assert (dh["stream"], dh["epoch"], dh["seq"]) == (7, 3, 1)
assert rd.digest(bh, base) == dh["base_digest"]
m = dh["m"]
if dh["type"] == 3:
    bits = [(base[i // 8] >> (i % 8)) & 1 for i in range(m)]
    take = [iter(xor[0]), iter(xor[1])]
    packed = bytearray((m + 7) // 8)
    for i, b in enumerate(bits):
        if next(take[b]):
            packed[i // 8] |= 1 << (i % 8)
    xor = bytes(packed)
result = bytes(a ^ b for a, b in zip(base, xor))
assert rd.digest(dh, result) == dh["result_digest"]
open(f"{out}/v3_ident_delta.bits", "wb").write(result)
PY
echo "v3_ident_delta 0 14000 2 0 delta" >> "$list"
# The sparse delta: applied by the reference to v3_sparse_dense, and checked
# against the positions of the keys key-51..key-350.
python3 tools/ref_kinds.py apply "$out/v3_sparse_dense.cbf" "$out/v3_sparse_delta.cbf" "$out/v3_sparse_delta.pos" >/dev/null
python3 tools/ref_kinds.py expect 4 5000 2 3 350 /tmp/expect.$$ 51
cmp "$out/v3_sparse_delta.pos" /tmp/expect.$$
rm -f /tmp/expect.$$
echo "v3_sparse_delta 4 5000 2 3 delta" >> "$list"
# Coder edge cases: the reference decoder's bits must be the listed
# positions (the list is what tests/golden/v3.rs compares the crate with).
grep -v '^#' "$out/golden_edges.txt" | while read -r name m ones; do
  python3 tools/ref_decoder.py "$out/$name.cbf" /tmp/edge.$$ >/dev/null
  python3 - /tmp/edge.$$ "$m" $ones <<'PY'
import sys
got = open(sys.argv[1], "rb").read()
m = int(sys.argv[2])
want = bytearray((m + 7) // 8)
for p in map(int, sys.argv[3:]):
    want[p // 8] |= 1 << (p % 8)
assert got == bytes(want), sys.argv[1]
PY
  rm -f /tmp/edge.$$
done
echo "v3 goldens written and cross-checked"
