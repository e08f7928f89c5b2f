#!/usr/bin/env bash
# Installs the language runtimes and kernels context-kernel uses (idempotent).
# Each runtime has its own snippet in install.d/; this script runs them all.
# Needs root for apt (CI and dev machines here run as root).
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
for snippet in "$here"/install.d/*.sh; do
  [ -e "$snippet" ] || continue
  echo "kernels/install.sh: $(basename "$snippet")" >&2
  bash "$snippet"
done
