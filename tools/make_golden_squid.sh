#!/usr/bin/env bash
# The Squid golden vectors (docs/FORMAT.md sections 1.1, 6, 7):
# tests/vectors/squid_500x5.digest is written by tools/squid_digest.py (an
# independent writer, from Squid's source) for the URLs of squid_urls.txt;
# v3_squid.cbf is the crate's frame of it, which the reference decoder
# (tools/ref_kinds.py, written from FORMAT.md) must turn back into the same
# digest, byte for byte. Golden vectors are a contract: rerun only with a
# format change, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/vectors
python3 tools/squid_digest.py build 500 5 "$out/squid_urls.txt" "$out/squid_500x5.digest"
python3 tools/squid_digest.py query "$out/squid_500x5.digest" "$out/squid_queries.txt" > "$out/squid_queries.expected"
cargo run --quiet --bin cbloom -- import --squid "$out/squid_500x5.digest" -o "$out/v3_squid.cbf"
python3 tools/ref_kinds.py squid "$out/v3_squid.cbf" /tmp/squid.$$
cmp /tmp/squid.$$ "$out/squid_500x5.digest"
rm -f /tmp/squid.$$
echo "Squid goldens written and cross-checked"
