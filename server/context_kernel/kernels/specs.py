"""Looking up installed kernelspecs, for callers outside kernels/ (doctor, notebook export)."""

from __future__ import annotations

from dataclasses import dataclass

from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel


@dataclass(frozen=True)
class SpecInfo:
    name: str
    display_name: str
    language: str


def find_spec(name: str) -> SpecInfo | None:
    """The installed kernelspec called `name`, or None when there is none."""
    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        return None
    return SpecInfo(name, spec.display_name, spec.language)
