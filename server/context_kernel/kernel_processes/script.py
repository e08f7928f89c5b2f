"""A Jupyter kernel that runs each cell as a fresh program of one language.

For languages with no installable Jupyter kernel here (Ruby, Go, Rust, PHP, Perl,
Elixir, C#): the cell becomes a source file (see ``script_languages``), is compiled
if needed and run with the kernel's working directory as cwd. Nothing survives
between cells. Launched as
``python -m context_kernel.kernel_processes.script --language ruby -f {connection_file}``.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import sys
import tempfile
from typing import Any

from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel
from traitlets import Unicode
from traitlets.config import Config

from context_kernel.kernel_processes.child import Child, Sink
from context_kernel.kernel_processes.script_languages import LANGUAGES, Language


def _discard(text: str) -> None:
    """Output sink for silent cells."""


def _writable_dir(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK)


def _remove_orphaned_scratch_dirs() -> None:
    """Delete scratch dirs of script kernels that died without cleaning up (killed by SIGKILL)."""
    pattern = re.compile(rf"^ck-(?:{'|'.join(LANGUAGES)})-(\d+)-")
    tmp = tempfile.gettempdir()
    for name in os.listdir(tmp):
        match = pattern.match(name)
        if match is None:
            continue
        path = os.path.join(tmp, name)
        try:
            if os.stat(path).st_uid != os.getuid():
                continue
            os.kill(int(match.group(1)), 0)  # raises if that kernel is gone
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


def child_env(scratch: str) -> dict[str, str]:
    """The environment programs run in: the kernel's, made to work for any user."""
    env = dict(os.environ)
    home = env.get("HOME", "")
    if not home or not _writable_dir(home):  # erlang refuses to start without HOME
        env["HOME"] = home = os.path.join(scratch, "home")
        os.makedirs(home, exist_ok=True)
    # Go's build cache lives in the user cache dir, so it survives cells and kernels
    cache = env.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    if "GOCACHE" not in env and not _writable_dir(cache):
        env["GOCACHE"] = os.path.join(scratch, "go-build")
    env.setdefault("GOTOOLCHAIN", "local")  # never download a toolchain (Go >= 1.21)
    ctype = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG") or ""
    if "utf" not in ctype.lower():  # Elixir warns and mangles non-ASCII under a C locale
        env["LC_ALL"] = "C.UTF-8"
    return env


class _Failure(Exception):
    """Ends a cell with an error reply: ename, evalue and traceback lines."""

    def __init__(self, ename: str, evalue: str, traceback: list[str] | None = None) -> None:
        super().__init__(evalue)
        self.ename, self.evalue = ename, evalue
        self.traceback = traceback if traceback is not None else [f"{ename}: {evalue}"]


class ScriptKernel(Kernel):
    implementation = "context_kernel.script"
    implementation_version = "0.1.0"
    language_name = Unicode("ruby", config=True, help="Which language this kernel runs.")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.language_name not in LANGUAGES:
            raise ValueError(f"unknown language {self.language_name!r}; one of {sorted(LANGUAGES)}")
        self.lang: Language = LANGUAGES[self.language_name]
        _remove_orphaned_scratch_dirs()
        self._scratch = tempfile.mkdtemp(prefix=f"ck-{self.lang.name}-{os.getpid()}-")
        self._env = child_env(self._scratch)
        self._children: set[Child] = set()
        self._interrupted = False
        # installed once: ipykernel's per-message default_int_handler would raise
        # KeyboardInterrupt inside the event loop instead of stopping the child
        signal.signal(signal.SIGINT, self._on_sigint)
        atexit.register(self._cleanup)

    @property
    def language_info(self) -> dict[str, Any]:  # type: ignore[override]  # per language: a property
        lang = self.lang
        return {
            "name": lang.name,
            "file_extension": lang.file_extension,
            "mimetype": lang.mimetype,
            "pygments_lexer": lang.name,
        }

    @property
    def banner(self) -> str:  # type: ignore[override]  # ipykernel declares a class attribute
        tools = ", ".join(tool for tool, _ in self.lang.tools)
        return (
            f"context-kernel script kernel for {self.lang.display_name} ({tools}). "
            "Each cell runs as a new program: no state is kept between cells."
        )

    @property
    def kernel_info(self) -> dict[str, Any]:
        info: dict[str, Any] = super().kernel_info
        info["supported_features"] = []  # no debugger, no subshells: one program at a time
        return info

    def pre_handler_hook(self) -> None:
        """Keep our SIGINT handler (see __init__)."""

    def post_handler_hook(self) -> None:
        """Keep our SIGINT handler (see __init__)."""

    def _on_sigint(self, signum: int, frame: object) -> None:
        # runs between bytecodes of the main thread: only flag and kill, no asyncio calls
        self._interrupted = True
        for child in list(self._children):
            child.kill()

    async def do_execute(
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: dict[str, Any] | None = None,
        allow_stdin: bool = False,
        *,
        cell_meta: dict[str, Any] | None = None,
        cell_id: str | None = None,
    ) -> dict[str, Any]:
        self._interrupted = False
        try:
            await self._execute(code, silent)
        except _Failure as failure:
            return self._error_reply(failure, silent)
        except Exception as exc:  # a reply must always come, or the client waits forever
            self.log.exception("script kernel failed to run a cell")
            return self._error_reply(_Failure(type(exc).__name__, str(exc)), silent)
        return {
            "status": "ok",
            "execution_count": self.execution_count,
            "payload": [],
            "user_expressions": {},
        }

    async def _execute(self, code: str, silent: bool) -> None:
        for tool, package in self.lang.tools:
            if shutil.which(tool, path=self._env.get("PATH")) is None:
                raise _Failure(
                    "RuntimeNotFound", f"{tool} is not installed: apt-get install {package} "
                    "(or, as root, context-kernel kernels install)"
                )
        program = self.lang.build(code, self._file_path(), self._scratch)
        for path, text in {program.path: program.source, **program.extra_files}.items():
            # lone surrogates can arrive through JSON; they must not stop the cell
            with open(path, "w", encoding="utf-8", errors="replace") as f:
                f.write(text)
        if program.compile:
            output: list[str] = []
            status = await self._run(program.compile, output.append, output.append, self._scratch)
            if status != 0:
                self._raise_if_interrupted()
                message = "".join(output).strip() or f"{program.compile[0]} exited with {status}"
                lines = message.splitlines()
                first = next(
                    (ln for ln in lines if "error" in ln.lower()),
                    next((ln for ln in lines if not ln.startswith("#")), lines[0]),
                )
                raise _Failure("CompileError", first.strip(), lines)
        self._raise_if_interrupted()
        out, err = (
            (_discard, _discard) if silent else (self._sender("stdout"), self._sender("stderr"))
        )
        status = await self._run(program.run, out, err, os.getcwd())
        self._raise_if_interrupted()
        if status != 0:
            detail = f"exit status {status}"
            if status < 0:
                detail = f"killed by {signal.Signals(-status).name}"
            raise _Failure("ExitCode", str(status), [f"ExitCode: {status} ({detail})"])

    def _file_path(self) -> str | None:
        """The file the caller attached to this cell (FILE_CONTENT), made absolute and checked."""
        meta = (self.get_parent().get("metadata") or {}).get("context_kernel") or {}
        path = meta.get("file_path")
        if not path:
            return None
        path = os.path.abspath(os.path.expanduser(str(path)))
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            raise _Failure("FileNotFoundError", f"cannot read file_path {path!r}")
        return path

    def _raise_if_interrupted(self) -> None:
        if self._interrupted:
            raise _Failure(
                "KeyboardInterrupt",
                "interrupted",
                ["KeyboardInterrupt: the running program was killed"],
            )

    def _sender(self, name: str) -> Sink:
        def send(text: str) -> None:
            self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})

        return send

    async def _run(self, argv: list[str], out: Sink, err: Sink, cwd: str) -> int:
        """Run one program to its end; return its exit status."""
        self._raise_if_interrupted()
        try:
            child = Child(argv, cwd, self._env, out, err)
        except OSError as exc:
            raise _Failure(type(exc).__name__, f"cannot run {argv[0]}: {exc}") from exc
        self._children.add(child)
        try:
            if self._interrupted:  # SIGINT arrived while we were spawning
                child.kill()
            return await child.finish()
        finally:
            self._children.discard(child)

    def _error_reply(self, failure: _Failure, silent: bool) -> dict[str, Any]:
        content = {"ename": failure.ename, "evalue": failure.evalue, "traceback": failure.traceback}
        if not silent:
            self.send_response(self.iopub_socket, "error", content)
        return {"status": "error", "execution_count": self.execution_count, **content}

    async def do_shutdown(self, restart: bool) -> dict[str, Any]:
        self._cleanup()
        return {"status": "ok", "restart": restart}

    def _cleanup(self) -> None:
        for child in list(self._children):
            child.kill()
        shutil.rmtree(self._scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``--language NAME`` is ours; everything else goes to IPKernelApp."""
    args = list(sys.argv[1:] if argv is None else argv)
    language = ""
    for at, arg in enumerate(args):
        if arg == "--language" and at + 1 < len(args):
            language = args[at + 1]
            del args[at : at + 2]
            break
        if arg.startswith("--language="):
            language = arg.split("=", 1)[1]
            del args[at]
            break
    config = Config()
    config.ScriptKernel.language_name = language
    IPKernelApp.launch_instance(argv=args, kernel_class=ScriptKernel, config=config)


if __name__ == "__main__":
    main()
