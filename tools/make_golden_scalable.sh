#!/usr/bin/env bash
# Scalable-kind golden vectors (docs/FORMAT.md section 8.3): a filter of
# the keys key-1..key-120 (v3_scalable_base.cbf), of key-1..key-300
# (v3_scalable.cbf, several layers), and the delta between them. The
# reference decoder (tools/ref_kinds.py, written from FORMAT.md alone)
# decodes both, applies the delta to the base, and rebuilds the layers from
# the keys (pip install xxhash); NAME.layers holds what it found (one layer
# a line: m k n capacity bits-in-hex). Golden vectors are a contract: rerun
# only with a format change, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/vectors
cb() { cargo run --quiet --bin cbloom -- "$@"; }
for n in 120 300; do
  name=v3_scalable; [ "$n" = 120 ] && name=v3_scalable_base
  seq 1 "$n" | sed 's/^/key-/' | cb build --type scalable --fpr 0.01 --initial-capacity 50 --seed 3 --keys - -o "$out/$name.cbf"
  python3 - "$out/$name.cbf" "$out/$name.layers" "$n" <<'PY'
import sys
sys.path.insert(0, "tools")
import ref_kinds as rk
h, _ = rk.decode_v3(open(sys.argv[1], "rb").read())
layers = rk.scalable_layers(h)
want = rk.expect_scalable(layers, h["seed"], int(sys.argv[3]))
assert [(l["m"], l["k"], l["n"], l["capacity"], l["bits"]) for l in want] == \
       [(l["m"], l["k"], l["n"], l["capacity"], l["bits"]) for l in layers], "layers differ"
open(sys.argv[2], "w").write("".join(f"{l['m']} {l['k']} {l['n']} {l['capacity']} {l['bits'].hex()}\n" for l in layers))
PY
done
cb delta "$out/v3_scalable_base.cbf" "$out/v3_scalable.cbf" -o "$out/v3_scalable_delta.cbf"
python3 tools/ref_kinds.py scalable "$out/v3_scalable_base.cbf" "$out/v3_scalable_delta.layers" "$out/v3_scalable_delta.cbf"
cmp "$out/v3_scalable_delta.layers" "$out/v3_scalable.layers"
rm "$out/v3_scalable_delta.layers"
echo "scalable goldens written and cross-checked"
