#!/usr/bin/env bash
# Installs the C library under a prefix:
#   cargo build --release -p compressed_bloom_c
#   bash bindings/c/install.sh PREFIX        # e.g. /usr/local, or $HOME/.local
# PREFIX/include/compressed_bloom.h, PREFIX/lib/libcompressed_bloom.a,
# PREFIX/lib/libcompressed_bloom.so.VERSION (with the .so.0 and .so links),
# and PREFIX/lib/pkgconfig/compressed_bloom.pc. The libraries are taken
# from $CARGO_TARGET_DIR/release (by default the workspace's target/).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 PREFIX" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
prefix=$1
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
release=${CARGO_TARGET_DIR:-$root/target}/release
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/Cargo.toml" | head -n 1)
for f in libcompressed_bloom.a libcompressed_bloom.so; do
  if [ ! -f "$release/$f" ]; then
    echo "$release/$f is missing: run cargo build --release -p compressed_bloom_c first" >&2
    exit 1
  fi
done

install -d "$prefix/include" "$prefix/lib/pkgconfig"
install -m 644 "$here/include/compressed_bloom.h" "$prefix/include/"
install -m 644 "$release/libcompressed_bloom.a" "$prefix/lib/"
install -m 755 "$release/libcompressed_bloom.so" "$prefix/lib/libcompressed_bloom.so.$version"
ln -sf "libcompressed_bloom.so.$version" "$prefix/lib/libcompressed_bloom.so.0"
ln -sf "libcompressed_bloom.so.0" "$prefix/lib/libcompressed_bloom.so"
# What a static link needs besides the archive (rustc's
# --print native-static-libs for Linux): `pkg-config --static --libs`.
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" \
  -e "s|@LIBS_PRIVATE@|-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc|" \
  "$here/compressed_bloom.pc.in" >"$prefix/lib/pkgconfig/compressed_bloom.pc"
echo "installed compressed_bloom $version under $prefix"
