#!/usr/bin/env bash
# The Python suite, as the README's test command runs it:
#   bash bindings/python/test.sh
# Builds the package into a fresh virtual environment (removed and made
# again on every run) with `pip install ./bindings/python`, which fetches
# maturin from PyPI and compiles the extension; installs pytest,
# hypothesis and mypy (which checks the stubs); builds the cbloom CLI the
# interoperability tests run; and runs pytest against the installed
# package. Needs python3 (3.9 or later, with venv and pip) and a Rust
# toolchain. Any failure fails the script.
set -euo pipefail
cd "$(dirname "$0")/../.."

target=${CARGO_TARGET_DIR:-$PWD/target}
venv="$target/python-test-venv"
python=${PYTHON:-python3}

echo "== Python: a fresh virtual environment in $venv"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  ./bindings/python pytest hypothesis mypy

echo "== Python: the cbloom CLI for the interoperability tests"
cargo build --release --quiet --bin cbloom
export CBLOOM="$target/release/cbloom"

echo "== Python: pytest"
# From the tests' folder, so that the package imported is the installed
# one, not bindings/python/python.
cd bindings/python/tests
"$venv/bin/python" -m pytest -p no:cacheprovider -q .
