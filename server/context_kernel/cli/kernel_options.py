"""The options of every command that starts kernels (serve, doctor, replay): which Python, which gateway.

Apart from the commands because three command groups share them; argparse is imported only when a
parser is built (the hooks never build one).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's constant: see cli/__init__.py
if TYPE_CHECKING:
    import argparse

    from ..settings import Settings

PYTHON_HELP = ("the python kernel's interpreter: a python, a virtual or conda environment's directory, or a command "
               "on PATH (default: CONTEXT_KERNEL_PYTHON, else the activated environment, else the project's own "
               "environment, else the server's Python; see docs/kernels.md)")


GATEWAY_HELP = ("run every kernel on this Jupyter Enterprise Gateway / Kernel Gateway / Jupyter Server "
                "(http(s)://host:port; default: CONTEXT_KERNEL_GATEWAY_URL, else JUPYTER_GATEWAY_URL)")


def gateway_unusable(command: str, settings: Settings) -> bool:
    """True, having said why and what to install, when a gateway is asked for that this install cannot use."""
    if settings.gateway is None:
        return False
    from ..kernels.gateway_client import missing_client

    problem = missing_client()
    if problem:
        print(f"context-kernel {command}: {problem}", file=sys.stderr)
    return problem is not None


def add_gateway_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gateway-url", metavar="URL", help=GATEWAY_HELP)
    parser.add_argument("--gateway-token", metavar="TOKEN",
                        help="sent as 'Authorization: token TOKEN' (default: CONTEXT_KERNEL_GATEWAY_TOKEN, else "
                             "JUPYTER_GATEWAY_AUTH_TOKEN); prefer the variable: arguments show in ps")
    parser.add_argument("--gateway-auth-header", metavar="'NAME: VALUE'",
                        help="a header of your own instead of the token (default: CONTEXT_KERNEL_GATEWAY_AUTH_HEADER)")
    parser.add_argument("--gateway-kernel-env", action="append", default=[], metavar="NAME=VALUE",
                        help="sent with every kernel start, e.g. KERNEL_USERNAME=alice or KERNEL_WORKING_DIR=/mnt/proj "
                             "(Enterprise Gateway passes KERNEL_* variables to the kernel; repeatable)")
    parser.add_argument("--gateway-request-timeout", type=float, metavar="SECONDS",
                        help="limit of one REST call to the gateway; a kernel start has its own (60 s) "
                             "(default: CONTEXT_KERNEL_GATEWAY_REQUEST_TIMEOUT_S, else 60)")
