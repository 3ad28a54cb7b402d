#!/usr/bin/env bash
# The Python benchmark (docs/BENCHMARKS.md, "Python"): a virtual
# environment of its own with the package and rbloom from PyPI, then
# bench.py. Arguments go to bench.py (`--small` checks the script quickly).
#   bash bindings/python/bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."

target=${CARGO_TARGET_DIR:-$PWD/target}
venv="$target/python-bench-venv"
rm -rf "$venv"
"${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check ./bindings/python rbloom
"$venv/bin/python" bindings/python/bench/bench.py "$@"
