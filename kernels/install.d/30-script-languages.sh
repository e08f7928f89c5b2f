#!/usr/bin/env bash
# Runtimes for the script kernel (ck-ruby, ck-perl, ck-php, ck-elixir, ck-go, ck-rust,
# ck-csharp; context_kernel/kernel_processes/script.py): each cell runs as a fresh program, so
# only Debian's interpreters/compilers are needed. Debian's rustc is installed even when a
# rustup toolchain is on PATH, so the kernel never depends on one.
# Run by kernels/install.sh (which provides apt_install); safe to run twice.
set -euo pipefail
packages=(ruby php-cli golang-go rustc elixir mono-mcs mono-runtime perl)

missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "30-script-languages.sh: not root: skipped (needs apt-get install ${missing[*]})" >&2
  exit 0
fi
apt_install "${missing[@]}"
