#!/usr/bin/env bash
# Regenerates tests/vectors/*.cbf (frames written by cbloom) and *.bits (the
# packed bit arrays that tools/ref_decoder.py, written from docs/FORMAT.md
# alone, decodes from them). Golden vectors are a contract: only run this
# when the format version changes, and commit the result with the bump.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/cbloom
out=tests/vectors
keys() { seq 1 "$1" | sed 's/^/key-/'; }
keys_range() { seq "$1" "$2" | sed 's/^/key-/'; }
list="$out/golden.txt"
echo "# name type seed m k n keys (key-1..key-N, one per line)" > "$list"
make() { # name nkeys seed m k [--raw]
  local name=$1 nk=$2 seed=$3 m=$4 k=$5; shift 5
  keys "$nk" | $bin build --keys - --m "$m" --k "$k" --seed "$seed" "$@" -o "$out/$name.cbf" 2>/dev/null
  local hdr; hdr=$(python3 tools/ref_decoder.py "$out/$name.cbf" "$out/$name.bits")
  local ty; ty=$(sed 's/.*type=\([0-9]*\).*/\1/' <<<"$hdr")
  echo "$name $ty $seed $m $k $nk" >> "$list"
  echo "$name: $(stat -c %s "$out/$name.cbf") bytes, $hdr"
}
make raw_small        100   7    1000      3 --raw
make coded_k2         1000  0    14000     2
make coded_sparse_k1  500   1    200000    1
make coded_dense      2000  5    8000      4
make empty_m1         0     0    1         1
make all_zero_2blocks 0     9    8389608   3
make sparse_2blocks   20    3    8393608   2
make all_ones         50    2    64        64
make interleaved      70000 11   1048576   2

# Deltas: from a golden base to the keys key-FROM..key-TO (same m, k, seed).
dlist="$out/golden_delta.txt"
echo "# name type base from to (type plain = 2, conditional = 3; the new filter holds key-FROM..key-TO)" > "$dlist"
delta() { # name type base from to m k seed
  local name=$1 kind=$2 base=$3 from=$4 to=$5 m=$6 k=$7 seed=$8
  local tmp; tmp=$(mktemp)
  keys_range "$from" "$to" | $bin build --keys - --m "$m" --k "$k" --seed "$seed" -o "$tmp" 2>/dev/null
  $bin delta --type "$kind" "$out/$base.cbf" "$tmp" -o "$out/$name.cbf" 2>/dev/null
  python3 tools/ref_decoder.py "$out/$base.cbf" "$out/$name.cbf" "$out/$name.bits" >/dev/null
  rm -f "$tmp"
  echo "$name $kind $base $from $to" >> "$dlist"
  echo "$name: $(stat -c %s "$out/$name.cbf") bytes"
}
# Format version 1: plain deltas.
delta delta_k2          plain coded_k2     51    1050   14000   2 0
delta delta_interleaved plain interleaved  3501  73500  1048576 2 11
# Format version 2: conditional deltas, including one whose base has no 0s
# (to the empty set: key-1..key-0) and one whose base has no 1s.
delta cdelta_k2          conditional coded_k2     51    1050   14000   2 0
delta cdelta_interleaved conditional interleaved  3501  73500  1048576 2 11
delta cdelta_sparse      conditional coded_sparse_k1 26 525   200000  1 1
delta cdelta_to_empty    conditional all_ones     1     0      64      64 2
delta cdelta_from_empty  conditional empty_m1     1     1      1       1 0
