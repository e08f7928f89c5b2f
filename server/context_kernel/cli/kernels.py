"""`context-kernel doctor` and `context-kernel kernels install`: check every language's kernel, and
register our kernelspecs (with the runtimes they need) so that any Jupyter can start them."""

from __future__ import annotations

import argparse
import os
import sys

from .environment import build_settings
from .kernel_options import PYTHON_HELP, add_gateway_arguments, gateway_unusable

INSTALL_DESCRIPTION = (
    "Installs what each language needs, then writes our kernelspecs started by this Python. "
    "Runtimes: R with IRkernel, Ruby, PHP, Go, Rust, Elixir, Mono, Perl, Node.js and npm come "
    "from apt and need root (without it each is skipped and named); the npm package typescript "
    "goes into this environment (no root). Kernelspecs: ours (ck-bash, ck-javascript, …) with "
    "this Python's absolute path, so a Jupyter of another environment can start them too, and "
    "R's (IRkernel behind our interrupt-safe launcher); and ck-python-… for this Python and for each "
    "project environment the server has run, the names exported notebooks give their python kernel."
    " Where: this environment when it is a "
    "virtual one, else the user's Jupyter dir; a --prefix owned by root needs root.")


def cmd_doctor(args: argparse.Namespace) -> int:
    from ..doctor import run_doctor

    settings = build_settings(args, dict(os.environ))
    if gateway_unusable("doctor", settings):
        return 2
    return run_doctor(settings, start=not args.no_start)


def cmd_kernels_install(args: argparse.Namespace) -> int:
    from ..errors import ContextKernelError
    from ..kernels.files import kernel_files
    from ..kernels.install import (
        install_ir_kernelspec,
        install_kernelspecs,
        irkernel_available,
        run_runtime_installers,
    )
    from ..kernels.python_specs import install_python_kernelspecs
    from ..locations import data_home

    in_venv = sys.prefix != sys.base_prefix
    user = args.user or not (args.sys_prefix or args.prefix or in_venv)  # default: this venv, else the user's
    prefix = None if user else (args.prefix or sys.prefix)
    try:
        files = kernel_files()
        if not args.no_runtimes and run_runtime_installers(files, sys.executable, dict(os.environ)) != 0:
            print("context-kernel kernels install: a runtime installer failed (its output is above); the "
                  "kernelspecs are installed anyway", file=sys.stderr)
        done = install_kernelspecs(sys.executable, user=user, prefix=prefix)
        # Exported python notebooks name the interpreter their cells ran in (ck-python-…): these make it runnable.
        done += install_python_kernelspecs(sys.executable, sys.prefix, data_home(dict(os.environ)) / "kernels",
                                           user=user, install_prefix=prefix)
        if irkernel_available():
            done.append(install_ir_kernelspec(files, user=user, prefix=prefix))
        else:
            print("note: R with IRkernel is not installed, so the r kernel is not registered (as root: "
                  "apt-get install r-cran-irkernel, then run this again)", file=sys.stderr)
    except ContextKernelError as exc:
        print(f"context-kernel kernels install: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"context-kernel kernels install: cannot write {exc.filename or 'the kernelspec directory'} "
              f"({exc.strerror or exc}): use --user, or the rights of whoever owns that prefix", file=sys.stderr)
        return 2
    where = {spec.directory.parent for spec in done}
    print(f"installed {len(done)} kernelspecs in {', '.join(map(str, sorted(where)))}, each started by "
          f"{sys.executable}: {', '.join(spec.name for spec in done)}")
    if not all(spec.searched for spec in done):
        path = os.pathsep.join(sorted(str(d.parent) for d in where))
        print(f"note: Jupyter looks there only when told: JUPYTER_PATH={path}", file=sys.stderr)
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`doctor` and `kernels install` on the main parser's subcommands."""
    doctor = sub.add_parser("doctor", help="list every language with its kernel and whether it starts",
                            description="Check the install, the data dir and every language's kernel. "
                                        "Exit status: 0 when no line is [FAIL], 1 when one is.")
    doctor.add_argument("--no-start", action="store_true",
                        help="start no kernel: only check that kernelspecs exist (the R libraries line still runs "
                        "R's startup)")
    doctor.add_argument("--project", default=None)
    doctor.add_argument("--python", metavar="PATH", help=PYTHON_HELP)
    add_gateway_arguments(doctor)
    doctor.set_defaults(func=cmd_doctor)
    kernels = sub.add_parser("kernels", help="install our kernelspecs so that any Jupyter can start them")
    kernels_sub = kernels.add_subparsers(dest="kernels_command", required=True)
    install = kernels_sub.add_parser(
        "install", help="install the language runtimes and register every kernelspec (what kernels/install.sh does)",
        description=INSTALL_DESCRIPTION)
    where = install.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true",
                       help="the user's Jupyter data dir: every JupyterLab of this user finds them (no root)")
    where.add_argument("--sys-prefix", action="store_true",
                       help="this Python's environment (what make serve does for .venv)")
    where.add_argument("--prefix", help="PREFIX/share/jupyter/kernels (e.g. /usr/local for every user: root)")
    install.add_argument("--no-runtimes", action="store_true", help="only register the kernelspecs")
    install.set_defaults(func=cmd_kernels_install)
