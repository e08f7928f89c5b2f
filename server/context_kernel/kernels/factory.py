"""How every kernel of this server is made, the pool's and doctor's: the project's python, the factory,
and the gateway client when kernels run on one (`serve --gateway-url`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..settings import Settings
    from .backend import Kernel
    from .gateway_client import Gateway
    from .python_env import ProjectPython

KernelFactory = Callable[[str], "Kernel"]
"""A kernel name → a new, not yet started kernel of that name."""


def project_python(settings: Settings) -> ProjectPython:
    """The python kernel of this project: which interpreter (kernels/interpreters.py) and how it runs."""
    from .python_env import find_project_python

    return find_project_python(settings.project_dir, settings.base_env if settings.base_env is not None else {},
                               kernels_dir=settings.kernels_dir, overlays_dir=settings.overlays_dir,
                               explicit=settings.python, explicit_from=settings.python_from,
                               extra_env=settings.extra_kernel_env)


def kernel_factory(settings: Settings, python: ProjectPython | None = None,
                   gateway: Gateway | None = None) -> KernelFactory:
    """How every kernel of this server is made (the pool's and doctor's): cwd, environment, where files go.

    With a `gateway` (`serve --gateway-url`) every kernel runs there instead: the gateway decides its
    working directory and environment.

    Every kernel gets the environment of the project's Python activated (its bin first on PATH), so
    `python` in a shell cell is the python kernel's interpreter."""
    from ..log_files import prune_logs
    from .backend import JupyterKernel
    from .specs import spec_manager

    if gateway is not None:
        from .gateway_kernel import GatewayKernel

        remote = gateway

        def make_remote(kernel_name: str) -> Kernel:
            return GatewayKernel(kernel_name, remote, env=dict(remote.config.kernel_env))

        return make_remote
    python = python or project_python(settings)
    env = python.env
    specs = spec_manager(settings.kernels_dir)
    prune = partial(prune_logs, settings.log_dir, settings.retention_days, settings.max_kernel_logs)

    def make(kernel_name: str) -> Kernel:
        prepare = python.prepare if kernel_name == python.kernel_name else None
        return JupyterKernel(kernel_name, cwd=settings.project_dir, env=env, runtime_dir=settings.runtime_dir,
                             log_dir=settings.log_dir, spec_manager=specs, prepare=prepare, prune_logs=prune)

    return make


def open_gateway(settings: Settings) -> Gateway | None:
    """The gateway client every kernel of this server shares (`serve --gateway-url`), or None: local kernels."""
    if settings.gateway is None:
        return None
    from .gateway_client import Gateway

    return Gateway(settings.gateway)
