"""Looking up kernelspecs: the installed ones, and the ones this server writes into its data dir
(the python kernel of a project's environment, kernels/python_env.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager
from traitlets import default


@dataclass(frozen=True)
class SpecInfo:
    name: str
    display_name: str
    language: str
    argv: tuple[str, ...] = ()
    resource_dir: str = ""


def spec_manager(kernels_dir: Path | None = None) -> KernelSpecManager:
    """A KernelSpecManager that looks in `kernels_dir` (the data dir's `kernels/`) before Jupyter's dirs."""
    manager = KernelSpecManager()
    if kernels_dir is not None:
        manager.kernel_dirs = [str(kernels_dir), *manager.kernel_dirs]
    return manager


def find_spec(name: str, kernels_dir: Path | None = None) -> SpecInfo | None:
    """The kernelspec called `name`, or None when there is none."""
    try:
        spec = spec_manager(kernels_dir).get_kernel_spec(name)
    except NoSuchKernel:
        return None
    return SpecInfo(name, spec.display_name, spec.language, tuple(spec.argv), spec.resource_dir)


def kernel_manager_class(kernels_dir: Path | None = None) -> type[AsyncKernelManager]:
    """A kernel manager class whose managers find the kernelspecs in `kernels_dir` too (replay's: nbclient
    makes, and shuts down, the managers of the classes it is given)."""

    class Manager(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _kernel_spec_manager_default(self) -> KernelSpecManager:
            return spec_manager(kernels_dir)

    return Manager
