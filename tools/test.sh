#!/usr/bin/env bash
# The README's test command: every suite, Rust, Python and C.
#   bash tools/test.sh
# Installs what the tests need (tools/test-deps.sh), runs the Rust crate's
# tests with every feature, then each binding's own suite
# (bindings/<language>/test.sh), which builds that binding into a fresh
# environment of its own. A suite that cannot run fails; none is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/test-deps.sh

echo "== Rust: cargo test --all-features"
cargo test --all-features

for suite in bindings/*/test.sh; do
  [ -e "$suite" ] || continue
  echo "== $(basename "$(dirname "$suite")"): $suite"
  bash "$suite"
done
echo "== every suite passed"
