#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and run memorybench-rs.
# Idempotent: a second run only checks and prints "setup: ok".
set -euo pipefail

say() { printf 'setup: %s\n' "$*"; }

if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
  say "cargo not found: install the Rust toolchain (rustup) first"
  exit 1
fi

# RocksDB's bindgen needs libclang; its C++ needs a compiler.
missing=()
dpkg -s clang >/dev/null 2>&1 || missing+=(clang)
dpkg -s libclang-dev >/dev/null 2>&1 || missing+=(libclang-dev)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
say "ok"
