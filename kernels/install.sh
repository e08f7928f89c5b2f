#!/usr/bin/env bash
# Installs the language runtimes and kernels context-kernel uses (idempotent).
# Each runtime has its own snippet in install.d/; this script runs them all, then registers the
# kernelspecs with `context-kernel kernels install --no-runtimes --sys-prefix`.
# `--runtimes-only`: the snippets only (what `context-kernel kernels install` runs; it registers
# the kernelspecs itself). Needs root for apt (CI and dev machines here run as root); nothing else
# here does: without root a snippet says which apt packages it would have installed.
# The Python: CK_PYTHON (set by `kernels install`), else VIRTUAL_ENV's, else ./.venv's, else python3.
set -euo pipefail
runtimes_only=""
[ "${1:-}" = "--runtimes-only" ] && runtimes_only=1
here="$(cd "$(dirname "$0")" && pwd)"
export DEBIAN_FRONTEND=noninteractive
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  # one apt-get update for all snippets; snippets call apt_install
  # -o DPkg::Lock::Timeout: wait for another apt holding the dpkg lock (unattended-upgrades, a parallel setup) instead of failing
  if [ -z "${CK_APT_UPDATED:-}" ]; then apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null; export CK_APT_UPDATED=1; fi
fi
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
export -f apt_install

for snippet in "$here"/install.d/*.sh; do
  [ -e "$snippet" ] || continue
  echo "kernels/install.sh: $(basename "$snippet")" >&2
  bash "$snippet"
done

if [ -z "$runtimes_only" ]; then
  # Our kernelspecs as pip installed them start a bare `python`, which a Jupyter of another
  # environment (a JupyterLab opening an exported notebook) replaces with its own: write them
  # again started by the venv's python, absolute, plus R's (kernels/ir) when IRkernel is there.
  if [ -n "${CK_PYTHON:-}" ]; then py="$CK_PYTHON"
  elif [ -n "${VIRTUAL_ENV:-}" ]; then py="$VIRTUAL_ENV/bin/python"
  elif [ -x .venv/bin/python ]; then py="$PWD/.venv/bin/python"
  else py="python3"; fi
  if "$py" -c 'import context_kernel' >/dev/null 2>&1; then
    "$py" -m context_kernel kernels install --no-runtimes --sys-prefix >&2
  else
    echo "kernels/install.sh: context-kernel is not installed for $py: kernelspecs left as they are" >&2
  fi
fi
