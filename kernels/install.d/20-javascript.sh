#!/usr/bin/env bash
# JavaScript/TypeScript kernels (ck-javascript, ck-typescript): our own kernel drives `node`
# (context_kernel/kernel_processes/node.py) and needs the npm package `typescript` for parsing
# and type stripping. It goes into the venv's prefix (share/context-kernel/npm), never global.
# Run by kernels/install.sh from the repo root with the venv activated; safe to run twice.
set -euo pipefail
TYPESCRIPT_VERSION="5.9"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "20-javascript.sh: node/npm missing and not root: skipped (needs apt-get install nodejs npm)" >&2
    exit 0
  fi
  apt_install nodejs npm
fi

# The venv's python decides the prefix: VIRTUAL_ENV when activated, else ./.venv.
if [ -n "${CK_PYTHON:-}" ]; then
  py="$CK_PYTHON"
elif [ -n "${VIRTUAL_ENV:-}" ]; then
  py="$VIRTUAL_ENV/bin/python"
elif [ -x .venv/bin/python ]; then
  py="$PWD/.venv/bin/python"
else
  py="$(command -v python3)"
fi
npm_prefix="$("$py" -c 'import sys, os; print(os.path.join(sys.prefix, "share", "context-kernel", "npm"))')"
ts_dir="$npm_prefix/node_modules/typescript"

if ! node -e 'const v = require(process.argv[1]).version; process.exit(v.startsWith(process.argv[2] + ".") ? 0 : 1)' \
    "$ts_dir" "$TYPESCRIPT_VERSION" >/dev/null 2>&1; then
  mkdir -p "$npm_prefix"
  npm install --prefix "$npm_prefix" --no-audit --no-fund --loglevel=error "typescript@~$TYPESCRIPT_VERSION.0" >&2
fi
echo "20-javascript.sh: node $(node --version), typescript $(node -p "require('$ts_dir').version") in $npm_prefix" >&2
