#!/usr/bin/env bash
# The BIP37 golden vectors (docs/FORMAT.md sections 1.3, 6, 7):
# bip37_core_tweak.filterload is Bitcoin Core's bloom_tests.cpp payload
# (bloom_create_insert_serialize_with_tweak); bip37_wallet.filterload is a
# wallet-sized filter (Core's sizing for 1,000 elements at 0.0001: 2,396
# bytes, 13 hash functions) holding the keys key-1..key-100, written by the
# reference tool (tools/ref_kinds.py bip37-build, MurmurHash3 from
# FORMAT.md alone). v3_bip37_*.cbf are the crate's frames of them, which the
# reference decoder must turn back into the same payloads, byte for byte.
# Golden vectors are a contract: rerun only with a format change, and
# commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/vectors
printf '03ce4299050000000100008001' | xxd -r -p > "$out/bip37_core_tweak.filterload"
python3 tools/ref_kinds.py bip37-build 2396 13 0x5eed1e55 1 100 "$out/bip37_wallet.filterload"
for name in core_tweak wallet; do
  cargo run --quiet --bin cbloom -- import --bip37 "$out/bip37_$name.filterload" -o "$out/v3_bip37_$name.cbf"
  python3 tools/ref_kinds.py bip37 "$out/v3_bip37_$name.cbf" /tmp/bip37.$$ > /dev/null
  cmp /tmp/bip37.$$ "$out/bip37_$name.filterload"
done
rm -f /tmp/bip37.$$
# Core's answers on its own vector, by the reference decoder.
python3 tools/ref_kinds.py bip37-query "$out/v3_bip37_core_tweak.cbf" \
  99108ad8ed9bb6274d3980bab5a85c048f0950c8 19108ad8ed9bb6274d3980bab5a85c048f0950c8 \
  | diff - <(printf '%s\n' '99108ad8ed9bb6274d3980bab5a85c048f0950c8 present' \
                          '19108ad8ed9bb6274d3980bab5a85c048f0950c8 absent')
echo "BIP37 goldens written and cross-checked"
