#!/usr/bin/env bash
# The README's test command: every suite, Rust, Python and C.
#   bash tools/test.sh
# Installs what the tests need (tools/test-deps.sh), runs the Rust crate's
# tests with every feature, then the Python and the C suites
# (bindings/python/test.sh, bindings/c/test.sh), each of which builds its
# binding into a fresh environment of its own. A suite that cannot run
# fails; none is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/test-deps.sh

echo "== Rust: cargo test --all-features"
cargo test --all-features

echo "== Python: bindings/python/test.sh"
bash bindings/python/test.sh

echo "== C: bindings/c/test.sh"
bash bindings/c/test.sh
echo "== every suite passed"
