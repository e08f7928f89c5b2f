"""`context-kernel doctor`: every language with its kernel, and whether that kernel starts and runs code."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from ..activity import doing
from ..kernels.factory import KernelFactory
from ..kernels.languages import LANGUAGES, Language, fix_for
from ..settings import Settings
from ..wording import counted
from .checks import KERNEL_CHECK_CONCURRENCY, Check, run_hello

__all__ = ["Check", "KernelFactory", "collect", "run_checks", "run_doctor"]

if TYPE_CHECKING:  # jupyter_client: only once a kernel is checked
    from ..kernels.gateway_client import Gateway
    from ..kernels.python_env import ProjectPython
    from ..semantic.files import ModelFiles


async def check_python(python: ProjectPython) -> Check:
    """Which interpreter and environment the python kernel (and the shell's PATH) use here, and why."""
    from ..errors import ContextKernelError

    try:
        await anyio.to_thread.run_sync(python.prepare)
    except ContextKernelError as exc:
        return Check("FAIL", "interpreter", f"{python.describe()} — {exc}".replace("\n", "; "))
    return Check("OK", "interpreter", python.describe())


async def check_libraries(settings: Settings, env: dict[str, str]) -> list[Check]:
    """Where the javascript/typescript and R kernels load the project's packages from, and why
    (kernels/project_libraries.py). R's line runs R's startup as the kernel's (no kernel is started)."""
    from ..kernels.project_libraries import describe_node, describe_r, r_libraries, r_library_command
    from ..kernels.specs import find_spec

    # Not "javascript ..."/"r ...": a subject that starts with a language's name is that language's kernel line.
    checks = [Check("OK", "JavaScript libraries", describe_node(settings.project_dir))]
    spec = find_spec("ir", settings.kernels_dir)
    if spec is None:  # no R kernel: its kernel line says how to install it
        return checks
    command = r_library_command(spec.argv, spec.resource_dir)
    if command is None or "--no-init-file" not in command:
        whose = "IRkernel's own" if command is None else "from an older kernels/install.sh"
        checks.append(Check("WARN", "R libraries", f"the ir kernelspec ({spec.resource_dir}) is {whose}: a profile "
                            "that activates renv hides IRkernel from it, and an renv library no profile activates "
                            "is not used — run: context-kernel kernels install"))
        return checks
    found = await r_libraries(command, settings.project_dir, env)
    if isinstance(found, str):
        checks.append(Check("WARN", "R libraries", found))
    else:
        level, detail = describe_r(found, settings.project_dir, env, settings.user_home)
        checks.append(Check(level, "R libraries", detail))
    return checks


async def check_language(settings: Settings, lang: Language, start: bool, kernels: KernelFactory,
                         kernel_name: str | None = None) -> Check:
    from ..errors import ContextKernelError
    from ..kernels.env import kernel_environment
    from ..kernels.install import launch_problem, launcher
    from ..kernels.specs import find_spec

    kernel_name = kernel_name or lang.kernel_name
    subject = f"{lang.name:<10} kernel {kernel_name}"
    if find_spec(kernel_name, settings.kernels_dir) is None:
        return Check("FAIL", subject, f"not installed — {lang.install}")
    if lang.name == "r":
        stock = stock_irkernel(settings)
        if stock:
            return Check("WARN", subject, stock)
    ours = launcher(lang.kernel_name)
    kernel_env = kernel_environment(settings.base_env or {}, settings.extra_kernel_env)
    problem = await launch_problem(ours, kernel_env) if ours else None
    if problem:
        return Check("FAIL", subject, problem)
    if not start:
        return Check("OK", subject, "kernelspec installed (not started: --no-start)")
    try:  # the kernel is made as the server makes its kernels (kernels/factory.py)
        failed, seconds = await run_hello(kernels(kernel_name), settings.kernel_start_timeout_s, lang.hello)
    except ContextKernelError as exc:
        return Check("FAIL", subject, f"{exc.message[:300]} — {fix_for(lang, exc.message)}")
    if failed is None:
        state = "stateful" if lang.stateful else "stateless: a fresh process per call"
        return Check("OK", subject, f"starts and runs code in {seconds:.1f} s ({state})")
    return Check("FAIL", subject, f"started but the test cell failed: {failed[:300]} — {fix_for(lang, failed)}")


def stock_irkernel(settings: Settings) -> str | None:
    """Why the `ir` kernelspec found is not ours (IRkernel behind kernels/ir/launch.R), or None."""
    from ..kernels.specs import find_spec

    # Stock IRkernel dies when an interrupt lands while it sets up a cell or sends output.
    spec = find_spec("ir", settings.kernels_dir)
    if spec is None or any("launch.R" in arg for arg in spec.argv):
        return None
    return (f"stock IRkernel ({spec.resource_dir}), which a timeout can kill; ours survives interrupts — "
            "run: context-kernel kernels install")


def check_kernelspecs() -> list[Check]:
    """Do our kernelspecs name their interpreter, so that a Jupyter of another environment can start them?"""
    import sys

    from ..kernels.install import launcher, registered_for_user

    ours = [found for found in (launcher(lang.kernel_name) for lang in LANGUAGES.values()) if found]
    if not ours:
        return []
    bare = [found for found in ours if not found.absolute]
    if bare:
        return [Check("WARN", "kernelspecs", f"{', '.join(f.name for f in bare)} start a bare `python`, which a "
                      "Jupyter of another environment replaces with its own (without context_kernel): exported "
                      f"notebooks of these kernels will not start there — run: "
                      f"{'; '.join(sorted({found.fix() for found in bare}))}")]
    pythons = sorted({found.python for found in ours})
    detail = f"{len(ours)} of ours start {', '.join(pythons)} (absolute: any Jupyter that finds them can)"
    if registered_for_user(sys.executable, [found.name for found in ours]):
        detail += "; registered for every Jupyter of this user"
    else:
        detail += (f"; for a JupyterLab of another environment: {sys.executable} -m context_kernel kernels "
                   "install --user")
    return [Check("OK", "kernelspecs", detail)]


def check_sqlite() -> Check:
    from ..store.db import fts5_trigram_support, sqlite_version

    problem = fts5_trigram_support()
    if problem is None:
        return Check("OK", "sqlite", f"{sqlite_version()} with FTS5 and the trigram tokenizer")
    return Check("FAIL", "sqlite", f"{sqlite_version()}: FTS5/trigram unavailable ({problem})")


def check_semantic(settings: Settings) -> Check:
    """Semantic recall: on (model verified), off by a setting, or missing/broken and how to fix it."""
    from ..semantic.status import probe

    status = probe(settings.semantic, settings.semantic_model, verify=True)
    if status.state == "on":
        return Check("OK", "semantic", f"on: {status.detail}{_backlog(settings, status.files)}")
    hint = f" — {status.hint}" if status.hint else ""
    return Check("WARN" if status.state != "off" else "OK", "semantic", f"{status.state}: {status.detail}{hint}")


def _backlog(settings: Settings, files: ModelFiles | None) -> str:
    """'; N sections waiting for their vectors' (or every one embedded), read from the database."""
    if files is None or not settings.db_path.is_file():
        return ""
    from ..semantic.encoding import kinds_for, vector_model_id
    from ..store.vectors import read_backlog

    try:
        count, size = read_backlog(settings.db_path, kinds=kinds_for(files), model=vector_model_id(files))
    except Exception as exc:  # noqa: BLE001 - an old or damaged database: the database check says more
        return f"; backlog unknown ({type(exc).__name__})"
    return (f"; {count} section(s) ({size / 1024:.0f} KB) waiting for their vectors (the server embeds them "
            "while it runs; searches rank by words until done)" if count else "; every section has its vectors")


def home_problem(home: Path) -> str | None:
    """None when the data dir exists (or can be made) and a file can be written in it; else why not."""
    from ..datadir import private_dir

    try:
        private_dir(home)
        probe = home / f".write-probe-{os.getpid()}"
        probe.write_text("ok")
        probe.unlink()
        return None
    except OSError as exc:
        return (f"the data dir {home} is not writable ({exc.strerror or exc}): make it writable, or point "
                "CONTEXT_KERNEL_HOME at a writable directory")


def check_home(settings: Settings) -> Check:
    problem = home_problem(settings.home)
    return Check("FAIL", "data dir", problem) if problem else Check("OK", "data dir", str(settings.home))


def check_database(settings: Settings) -> list[Check]:
    """Does the database open and pass quick_check; how big are it and the logs (retention keeps them)."""
    from ..log_files import KERNEL_LOG_GLOB
    from ..store.retention import file_size, inspect_database

    report = inspect_database(settings.db_path)
    mb = 1024 * 1024
    if not report.exists:
        db = Check("OK", "database", f"{report.path} not created yet (the first tool call creates it)")
    elif report.problem:
        db = Check("FAIL", "database", report.problem)
    else:
        vacuum = "incremental vacuum" if report.incremental_vacuum else "no auto-vacuum yet (the server converts it)"
        db = Check("OK", "database", f"{report.path}: quick_check ok, {report.bytes / mb:.1f} MB + WAL "
                   f"{report.wal_bytes / mb:.1f} MB ({report.free_bytes / mb:.1f} MB free pages; {vacuum}); "
                   f"keeps {settings.retention_days:g} days, at most {settings.max_db_mb} MB")
    try:
        files = [p for p in settings.log_dir.iterdir() if p.is_file()]
    except OSError:
        files = []
    kernel_logs = sum(1 for p in files if p.match(KERNEL_LOG_GLOB))
    size = sum(file_size(p) for p in files)  # a log may go meanwhile (another server's retention)
    logs = Check("OK", "logs", f"{settings.log_dir}: {counted(len(files), 'file')}, {size / mb:.1f} MB "
                 f"({counted(kernel_logs, 'kernel log')}; at most {settings.max_kernel_logs} kept)")
    return [db, logs]


def check_versions() -> Check:
    import platform
    from importlib import metadata

    from .. import __version__

    parts = [f"context-kernel {__version__}", f"python {platform.python_version()}"]
    for dist in ("mcp", "jupyter_client", "ipykernel", "sqlalchemy", "nbformat"):
        try:
            parts.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            return Check("FAIL", "versions", f"{dist} is not installed — reinstall context-kernel")
    return Check("OK", "versions", ", ".join(parts))


def check_hooks(settings: Settings) -> list[Check]:
    """Per client: which of its hook events call context-kernel (set up with `context-kernel setup`)."""
    from ..setup.clients import CLIENTS
    from ..setup.status import hooks_status, mcp_entry_present

    if settings.user_home is None:
        return [Check("WARN", "hooks", "user home unknown: client settings not checked")]
    checks = []
    for client in CLIENTS:
        rows = hooks_status(client, settings.project_dir, settings.user_home, settings.client_dirs)
        registered = mcp_entry_present(client, settings.project_dir, settings.user_home, settings.client_dirs)
        if not registered and not any(r[1] for r in rows):
            checks.append(Check("OK", f"client {client}", f"not set up (`context-kernel setup {client}` to use it)"))
            continue
        active = [event for event, on, _where in rows if on]
        if not rows:
            checks.append(Check("WARN", f"hooks {client}", "this client has no hooks; routing relies on instructions"))
        elif len(active) == len(rows):
            checks.append(Check("OK", f"hooks {client}", f"all {len(rows)} active: {', '.join(active)}"))
        elif active:
            missing = [event for event, on, _ in rows if not on]
            checks.append(Check("WARN", f"hooks {client}",
                                f"active: {', '.join(active)}; missing: {', '.join(missing)} "
                                f"— run `context-kernel setup {client}`"))
        else:
            checks.append(Check("WARN", f"hooks {client}", f"none active — run `context-kernel setup {client}` "
                                "if you use this client"))
    return checks




async def collect(settings: Settings, start: bool, kernels: KernelFactory, python: ProjectPython,
                  gateway: Gateway | None = None) -> list[Check]:
    checks = [check_versions(), check_home(settings), check_sqlite(), *check_database(settings),
              await anyio.to_thread.run_sync(check_semantic, settings)]
    if gateway is not None:  # every kernel runs there: the local interpreter and kernelspecs do not matter
        from .gateway import check_gateway

        return checks + await check_gateway(settings, gateway, start, kernels) + check_hooks(settings)
    doing("doctor: checking the python environment")
    env_check = await check_python(python)  # writes the project python's kernelspec, found below
    checks.append(env_check)
    checks += await check_libraries(settings, python.env)
    results: dict[str, Check] = {}
    limiter = anyio.Semaphore(KERNEL_CHECK_CONCURRENCY)

    async def one(lang: Language) -> None:
        if lang.name == "python" and env_check.level == "FAIL":
            results[lang.name] = Check("FAIL", f"{lang.name:<10} kernel {python.kernel_name}",
                                       "cannot start in this environment (the interpreter check above says why)")
            return
        async with limiter:
            name = python.kernel_name if lang.name == "python" else None
            results[lang.name] = await check_language(settings, lang, start, kernels, name)
        doing(f"doctor: {len(results)} of {len(LANGUAGES)} kernels checked (last: {lang.name})")

    async with anyio.create_task_group() as tg:
        for lang in LANGUAGES.values():
            tg.start_soon(one, lang)
    checks += [results[name] for name in LANGUAGES]
    checks += check_kernelspecs()
    checks += check_hooks(settings)
    return checks


async def run_checks(settings: Settings, *, start: bool,
                     spares: list[tuple[str, int | None, float]] | None = None) -> list[Check]:
    """Every check, with kernels made as the server makes them (kernels/factory.py): what ctx_doctor and
    `context-kernel doctor` both run. `spares`: a running server's prewarmed kernels, for their line."""
    from ..kernels.factory import kernel_factory, open_gateway, project_python

    python = project_python(settings)
    gateway = open_gateway(settings)
    try:
        checks = await collect(settings, start, kernel_factory(settings, python, gateway), python, gateway=gateway)
    finally:
        if gateway is not None:
            await gateway.aclose()
    if spares is not None:
        from .prewarmed import prewarmed_check

        checks.append(prewarmed_check(spares))
    return checks


def run_doctor(settings: Settings, start: bool = True) -> int:
    """`context-kernel doctor`: the checks printed, exit 1 if one failed."""
    checks = anyio.run(partial(run_checks, settings, start=start))
    for check in checks:
        print(check.line(), flush=True)
    return 1 if any(c.level == "FAIL" for c in checks) else 0
