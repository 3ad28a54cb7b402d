#!/usr/bin/env bash
# Installs what the test suite needs beyond cargo, on a fresh Debian or
# Ubuntu machine: nats-server (the nats feature's tests start their own on
# loopback, and three as a cluster through tools/nats_cluster.sh), and the
# commands the CLI tests drive cbloom with (`script`
# for a terminal, `chattr` to lock a directory, `mkfifo`). What cannot be
# installed here is named, and the script fails: no test is left to skip.
set -euo pipefail

# command -> Debian package
declare -A need=(
  [nats-server]=nats-server
  [script]=bsdutils
  [chattr]=e2fsprogs
  [mkfifo]=coreutils
  [python3]=python3
  [pkg-config]=pkg-config
  [gcc]=gcc
  [g++]=g++
)
missing=()
for cmd in "${!need[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
done
if [ -n "${NATS_SERVER:-}" ] && [ -x "$NATS_SERVER" ]; then
  missing=("${missing[@]/nats-server/}")
fi
# The Python suite makes a virtual environment: Debian's python3 needs
# python3-venv (and pip) for that.
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
  missing+=(python3-venv python3-pip)
fi
pkgs=$(printf '%s\n' "${missing[@]}" | sed '/^$/d' | sort -u | tr '\n' ' ')
if [ -n "${pkgs// /}" ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "== installing: $pkgs"
    apt-get update -qq && apt-get install -y -qq $pkgs >/dev/null
  elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then
    echo "== installing: $pkgs"
    sudo apt-get update -qq && sudo apt-get install -y -qq $pkgs >/dev/null
  else
    echo "tools/test-deps.sh: the tests need these packages, which cannot be" >&2
    echo "installed with apt-get here: $pkgs(or set NATS_SERVER to a nats-server binary)" >&2
    exit 1
  fi
fi
echo "== test dependencies present: $("${NATS_SERVER:-nats-server}" --version)"
