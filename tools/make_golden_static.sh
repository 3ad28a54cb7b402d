#!/usr/bin/env bash
# Regenerates the golden vectors of format type 4, static coded
# (tests/vectors/v3_static_*): frames written by tools/vectors/src/bin/golden_static.rs,
# decoded by tools/ref_kinds.py (written from docs/FORMAT.md alone) into
# NAME.bits, and cross-checked against the same array computed in Python:
# from the keys with XXH3 (pip install xxhash) or from the synthetic formula
# of golden_static.txt. Golden vectors are a contract: rerun only with a
# format change, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/vectors
cargo run --quiet --release --manifest-path tools/vectors/Cargo.toml --bin golden_static -- "$out"
grep -v '^#' "$out/golden_static.txt" | while read -r name kind m k seed n source seglog ts forced; do
  python3 tools/ref_kinds.py decode "$out/$name.cbf" "$out/$name.bits" >/dev/null
  if [ "$source" = keys ]; then
    python3 tools/ref_kinds.py expect "$kind" "$m" "$k" "$seed" "$n" /tmp/expect.$$
  else
    python3 - "$m" "$seglog" "$ts" /tmp/expect.$$ <<'PY'
import sys
m, seglog = int(sys.argv[1]), int(sys.argv[2])
ts = [int(t) for t in sys.argv[3].split(",")]
out = bytearray((m + 7) // 8)
for i in range(m):
    if ((i * 0x9E3779B97F4A7C15) % (1 << 64)) >> 32 < ts[i >> seglog]:
        out[i // 8] |= 1 << (i % 8)
open(sys.argv[4], "wb").write(bytes(out))
PY
  fi
  cmp "$out/$name.bits" /tmp/expect.$$
  rm -f /tmp/expect.$$
  echo "$name: the reference decoder's bits equal the independent array"
done
echo "type-4 goldens written and cross-checked"
