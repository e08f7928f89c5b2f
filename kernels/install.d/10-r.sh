#!/usr/bin/env bash
# R kernel: Debian's IRkernel (pulls r-base-core). Our kernelspec kernels/ir (IRkernel behind a
# launcher that survives SIGINT) is registered as "ir" by `context-kernel kernels install` once
# IRkernel is there, rather than through pyproject's shared-data, so that it exists only where R
# does (a missing kernelspec is what makes the server say "install R"). Safe to rerun.
set -euo pipefail

has_irkernel() {
  command -v R >/dev/null 2>&1 &&
    Rscript -e 'quit(status = if (requireNamespace("IRkernel", quietly = TRUE)) 0 else 1)' >/dev/null 2>&1
}

if ! has_irkernel; then
  if [ "$(id -u)" != 0 ]; then
    echo "10-r.sh: R/IRkernel missing and not root: skipped (needs apt-get install r-cran-irkernel)" >&2
    exit 0
  fi
  apt_install r-cran-irkernel
fi
