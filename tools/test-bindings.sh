#!/usr/bin/env bash
# The bindings' suites, the last part of the README's test command:
#   bash tools/test-deps.sh && cargo test --all-features && bash tools/test-bindings.sh
# Runs the Python suite (bindings/python/test.sh) and the C suite
# (bindings/c/test.sh), each of which builds its binding into a fresh
# environment of its own. A suite that cannot run fails; none is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Python: bindings/python/test.sh"
bash bindings/python/test.sh

echo "== C: bindings/c/test.sh"
bash bindings/c/test.sh
echo "== the Python and C suites passed"
