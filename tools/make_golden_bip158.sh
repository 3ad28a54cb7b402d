#!/usr/bin/env bash
# The BIP158 golden vectors (docs/FORMAT.md sections 1.2, 6, 7 and 8.4,
# "Scheme 3"): for each block of Bitcoin Core's tests/data/blockfilters.json,
# and for a synthetic filter with a repeated value (two scripts of one
# value, which no Core row has), the crate's frame of the filter
# (tests/vectors/bip158_NAME.cbf). tests/vectors/golden_bip158.txt lists
# `name block_hash filter_hex` (hash as printed, filter as BIP158 sends it);
# the reference decoder (tools/ref_kinds.py bip158, written from FORMAT.md
# alone) must give each filter back byte for byte. Golden vectors are a
# contract: rerun only with a format change, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/vectors
list="$out/golden_bip158.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --quiet --bin cbloom
cbloom=${CARGO_TARGET_DIR:-target}/debug/cbloom
{
  echo "# name block_hash(printed order) bip158_filter_hex"
  python3 - tests/data/blockfilters.json <<'PY'
import json, sys
for row in json.load(open(sys.argv[1]))[1:]:
    print(f"h{row[0]} {row[1]} {row[5]}")
PY
  # N = 2, both values 100000: the codes 0 0011000011010100000 and
  # 0 0000000000000000000 (a difference of 0), 40 bits.
  echo "repeat 1111111111111111111111111111111111111111111111111111111111111111 02186a000000"
} > "$list"
grep -v '^#' "$list" | while read -r name hash filter; do
  echo "$filter" > "$tmp/f.hex"
  "$cbloom" import --bip158 "$tmp/f.hex" --hex --block-hash "$hash" -o "$out/bip158_$name.cbf" 2>/dev/null
  got=$(python3 tools/ref_kinds.py bip158 "$out/bip158_$name.cbf")
  [ "$got" = "$(echo "$hash" | sed 's/../& /g' | tr ' ' '\n' | tac | tr -d '\n') $filter" ] || {
    echo "reference decoder disagrees on $name: $got" >&2; exit 1; }
done
echo "BIP158 goldens written and cross-checked"
