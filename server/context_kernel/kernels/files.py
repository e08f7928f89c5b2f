"""Where this install keeps the repository's `kernels/` directory: kernelspecs, launch.R, install scripts.

A wheel carries it as package data (`context_kernel/_kernels`, hatch force-include), so a `pip`,
`pipx` or `uv tool` install has the R launcher and the runtime installers too; an editable install
from a checkout uses the checkout's `kernels/` itself.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ContextKernelError

PACKAGED = "_kernels"


def kernel_files() -> Path:
    """The `kernels/` directory of this install; raises ContextKernelError when it has none."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / PACKAGED, package.parent.parent / "kernels"):  # wheel, then checkout
        if (candidate / "install.sh").is_file() and (candidate / "ir" / "launch.R").is_file():
            return candidate
    raise ContextKernelError("this install of context-kernel has lost its kernel files (kernels/install.sh, "
                             "kernels/ir/launch.R)", hint="reinstall context-kernel")
