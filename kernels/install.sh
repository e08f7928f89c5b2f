#!/usr/bin/env bash
# Installs the language runtimes and kernels context-kernel uses (idempotent).
# Each runtime has its own snippet in install.d/; this script runs them all.
# Needs root for apt (CI and dev machines here run as root); nothing else here does.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export DEBIAN_FRONTEND=noninteractive
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  # one apt-get update for all snippets; snippets call apt_install
  if [ -z "${CK_APT_UPDATED:-}" ]; then apt-get update -qq >/dev/null; export CK_APT_UPDATED=1; fi
fi
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
export -f apt_install

# Our kernelspecs (ck-bash, ck-javascript, …) as pip installed them start a bare `python`, which a
# Jupyter of another environment (a JupyterLab opening an exported notebook) replaces with its own:
# write them again started by the venv's python, absolute. Needs no root (it writes into the venv).
# The venv's python: VIRTUAL_ENV when activated, else ./.venv (as the snippets decide it).
if [ -n "${VIRTUAL_ENV:-}" ]; then py="$VIRTUAL_ENV/bin/python"
elif [ -x .venv/bin/python ]; then py="$PWD/.venv/bin/python"
else py="python3"; fi
if "$py" -c 'import context_kernel' >/dev/null 2>&1; then
  "$py" -m context_kernel kernels install --sys-prefix >&2
else
  echo "kernels/install.sh: context-kernel is not installed for $py: kernelspecs left as they are" >&2
fi

for snippet in "$here"/install.d/*.sh; do
  [ -e "$snippet" ] || continue
  echo "kernels/install.sh: $(basename "$snippet")" >&2
  bash "$snippet"
done
