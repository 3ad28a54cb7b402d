#!/usr/bin/env bash
# The whole test suite, as the README gives it: installs what the tests need
# on a fresh Debian or Ubuntu machine, then runs every suite. A suite that
# cannot run fails here, naming what is missing; none is skipped silently.
set -euo pipefail
cd "$(dirname "$0")/.."

# The `nats` feature's tests start their own nats-server -js on loopback.
nats="${NATS_SERVER:-nats-server}"
if ! command -v "$nats" >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "== installing nats-server (apt-get)"
    apt-get update -qq && apt-get install -y -qq nats-server >/dev/null
  elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then
    echo "== installing nats-server (sudo apt-get)"
    sudo apt-get update -qq && sudo apt-get install -y -qq nats-server >/dev/null
  else
    echo "tools/test.sh: the nats tests need nats-server, which is not on the PATH" >&2
    echo "and cannot be installed with apt-get here: install it (a release from nats.io)" >&2
    echo "and put it on the PATH, or set NATS_SERVER to its path." >&2
    exit 1
  fi
fi
echo "== nats-server: $("$nats" --version)"

echo "== Rust: cargo test --all-features"
cargo test --all-features
