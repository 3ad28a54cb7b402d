#!/usr/bin/env bash
# Writes the signed golden frames (docs/FORMAT.md section 6, tag 2) and
# checks each signature with tools/ref_kinds.py and tools/ref_ed25519.py,
# written from the document and RFC 8032 alone.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --manifest-path tools/vectors/Cargo.toml --bin golden_signed -- tests/vectors
public=$(sed -n 's/^# public key //p' tests/vectors/golden_signed.txt)
for name in signed_full signed_delta; do
  python3 tools/ref_kinds.py verify "tests/vectors/$name.cbf" "$public"
done
