#!/usr/bin/env bash
# The C suite (the README's test command runs it after the Rust tests):
#   bash bindings/c/test.sh
# Builds the library, checks that the committed header is the one
# cbindgen generates, runs the C tests and the arbitrary-bytes driver
# under AddressSanitizer and UndefinedBehaviorSanitizer, compiles the
# header as C++17, installs into a scratch prefix and builds the README's
# example through pkg-config, and runs the TCP peer example. Needs gcc,
# g++ and pkg-config (installed with apt-get if missing). Exits non-zero
# on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
release=$CARGO_TARGET_DIR/release
vectors=$root/tests/vectors

if ! command -v pkg-config >/dev/null 2>&1; then
  echo "-- installing pkg-config"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq pkg-config >/dev/null
fi
for tool in gcc g++ pkg-config; do
  command -v "$tool" >/dev/null || { echo "$tool is required" >&2; exit 1; }
done

work=$(mktemp -d)
origin_pid=""
cleanup() {
  if [ -n "$origin_pid" ]; then kill "$origin_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "-- the committed header is cbindgen's (and the crate's Rust tests)"
cargo test --quiet -p compressed_bloom_c

echo "-- cargo build --release -p compressed_bloom_c"
cargo build --quiet --release -p compressed_bloom_c

static_libs="$release/libcompressed_bloom.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=all -g)
cflags=(-std=c99 -Wall -Wextra -Werror -I"$here/include")
# allocator_may_return_null: the out-of-memory test asks for 2^53 bytes,
# which the library must refuse (CB_ERROR_OUT_OF_MEMORY), not ASan.
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

echo "-- C tests (gcc -std=c99 -Wall -Wextra -Werror, ASan + UBSan)"
# shellcheck disable=SC2086
gcc "${cflags[@]}" "${sanitize[@]}" "$here/tests/test_api.c" $static_libs -o "$work/test_api"
RUST_BACKTRACE=0 "$work/test_api" "$vectors"

echo "-- arbitrary bytes into every decoding entry point (ASan + UBSan)"
# shellcheck disable=SC2086
gcc "${cflags[@]}" "${sanitize[@]}" "$here/tests/arbitrary_bytes.c" $static_libs \
  -o "$work/arbitrary_bytes"
"$work/arbitrary_bytes" "$vectors" "${CB_ARBITRARY_ITERATIONS:-20000}"

echo "-- the header in C++17 (g++ -std=c++17 -Wall -Wextra -Werror)"
# shellcheck disable=SC2086
g++ -std=c++17 -Wall -Wextra -Werror -I"$here/include" "$here/tests/cpp_header.cpp" \
  $static_libs -o "$work/cpp_header"
"$work/cpp_header"

echo "-- install into a prefix, and the README's example through pkg-config"
prefix=$work/prefix
bash "$here/install.sh" "$prefix"
for f in include/compressed_bloom.h lib/libcompressed_bloom.a lib/libcompressed_bloom.so \
  lib/libcompressed_bloom.so.0 lib/pkgconfig/compressed_bloom.pc; do
  [ -e "$prefix/$f" ] || { echo "install: $f is missing" >&2; exit 1; }
done
cmp "$here/include/compressed_bloom.h" "$prefix/include/compressed_bloom.h"
# The README shows examples/readme.c: the two must not drift.
awk '/<!-- bindings\/c\/examples\/readme.c -->/ {on = 1; next}
     on && /^```c$/ {inside = 1; next}
     inside && /^```$/ {exit}
     inside {print}' "$root/README.md" >"$work/readme_block.c"
if ! cmp -s "$work/readme_block.c" "$here/examples/readme.c"; then
  echo "README.md's C example differs from bindings/c/examples/readme.c:" >&2
  diff "$here/examples/readme.c" "$work/readme_block.c" >&2 || true
  exit 1
fi
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
(
  cd "$work"
  # shellcheck disable=SC2046
  ${CC:-cc} -o readme "$here/examples/readme.c" $(pkg-config --cflags --libs compressed_bloom)
  LD_LIBRARY_PATH=$prefix/lib ./readme | tee readme.out
  grep -q "key-7 may be present" readme.out
  # Statically: the archive, and what pkg-config --static adds.
  # shellcheck disable=SC2046
  ${CC:-cc} -o readme_static "$here/examples/readme.c" $(pkg-config --cflags compressed_bloom) \
    "$prefix/lib/libcompressed_bloom.a" $(pkg-config --static --libs-only-l compressed_bloom | sed 's/-lcompressed_bloom//')
  ./readme_static | cmp - readme.out
)

echo "-- example: a peer that follows an origin's filter over TCP"
# shellcheck disable=SC2086
for program in origin peer; do
  gcc "${cflags[@]}" "${sanitize[@]}" "$here/examples/$program.c" $static_libs -o "$work/$program"
done
"$work/origin" "$work/port" 8 2>"$work/origin.log" &
origin_pid=$!
for _ in $(seq 1 100); do
  [ -s "$work/port" ] && break
  sleep 0.1
done
[ -s "$work/port" ] || { echo "the origin did not start" >&2; cat "$work/origin.log" >&2; exit 1; }
printf '%s\n' http://origin.example/object/3999 http://origin.example/object/900 \
  http://origin.example/object/50 http://elsewhere.example/ |
  "$work/peer" "$(cat "$work/port")" | tee "$work/peer.out"
wait "$origin_pid"
origin_pid=""
# 8 updates taken (full frames and deltas); URLs still cached hit, the
# evicted one and a foreign one miss (the false-positive rate is 1%, and
# these answers are deterministic).
[ "$(grep -c '^update' "$work/peer.out")" -eq 8 ]
grep -q '^update .*: delta' "$work/peer.out"
grep -qx 'HIT http://origin.example/object/3999' "$work/peer.out"
grep -qx 'HIT http://origin.example/object/900' "$work/peer.out"
grep -qx 'MISS http://origin.example/object/50' "$work/peer.out"
grep -qx 'MISS http://elsewhere.example/' "$work/peer.out"
echo "C suite: ok"
