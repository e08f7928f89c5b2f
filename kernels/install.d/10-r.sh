#!/usr/bin/env bash
# R kernel: Debian's IRkernel (pulls r-base-core), plus our kernelspec kernels/ir (IRkernel behind
# a launcher that survives SIGINT) registered as "ir" in the venv's prefix, so the server's Jupyter
# finds it without a global `jupyter` on PATH. The spec is installed here rather than through
# pyproject's shared-data so that it exists only where R does (a missing kernelspec is what makes
# the server say "install R"). Run by kernels/install.sh with the venv activated; safe to rerun.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

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

# The venv's python decides where the kernelspec goes: VIRTUAL_ENV when activated, else ./.venv.
if [ -n "${VIRTUAL_ENV:-}" ]; then
  py="$VIRTUAL_ENV/bin/python"
elif [ -x .venv/bin/python ]; then
  py=".venv/bin/python"
else
  py="python3"
fi

# Replaces the spec IRkernel::installspec() or an older run left under the same name.
"$py" -m jupyter kernelspec install --sys-prefix --replace --name ir --log-level=WARN "$here/../ir"
"$py" -c '
from jupyter_client.kernelspec import KernelSpecManager
print("10-r.sh: kernelspec ir in", KernelSpecManager().get_kernel_spec("ir").resource_dir)
'
