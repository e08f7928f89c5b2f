"""The environment kernels run with: the server's own, minus variables that inject code into runtimes."""

from __future__ import annotations

from collections.abc import Mapping

# Variables that make a runtime load or run code the agent did not write (startup files, preload
# libraries, compiler wrappers, module paths). Same list as the reference, kept in one place.
INJECTION_VARS: frozenset[str] = frozenset({
    "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS", "CDPATH", "INPUTRC", "BASH_XTRACEFD",
    "NODE_OPTIONS", "NODE_PATH",
    "PYTHONSTARTUP", "PYTHONHOME", "PYTHONWARNINGS", "PYTHONBREAKPOINT", "PYTHONINSPECT",
    "RUBYOPT", "RUBYLIB",
    "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB",
    "ERL_AFLAGS", "ERL_FLAGS", "ELIXIR_ERL_OPTIONS", "ERL_LIBS",
    "GOFLAGS", "CGO_CFLAGS", "CGO_LDFLAGS",
    "RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS",
    "PHPRC", "PHP_INI_SCAN_DIR",
    "R_PROFILE", "R_PROFILE_USER", "R_HOME",
    "LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "OPENSSL_CONF", "OPENSSL_ENGINES",
    "CC", "CXX", "AR",
    "GIT_TEMPLATE_DIR", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "DOTNET_STARTUP_HOOKS", "DOTNET_ADDITIONAL_DEPS", "DOTNET_SHARED_STORE",
})
INJECTION_PREFIXES: tuple[str, ...] = (
    "BASH_FUNC_", "CARGO_BUILD_RUSTC", "CORECLR_", "COMPlus_", "DOTNET_PROFILER", "DOTNET_EnableDiagnostics",
)
# Jupyter's own hand-off variables must not leak from a server that itself runs inside a kernel.
# PYTEST_CURRENT_TEST makes ipykernel stop capturing fd-level output, so it must not leak either.
_JUPYTER_VARS: frozenset[str] = frozenset({
    "JPY_PARENT_PID", "JPY_SESSION_NAME", "JPY_INTERRUPT_EVENT", "PYTEST_CURRENT_TEST",
})


def is_injection_var(name: str) -> bool:
    return name in INJECTION_VARS or name.startswith(INJECTION_PREFIXES)


def kernel_environment(base: Mapping[str, str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return `base` without code-injection variables, plus `extra`."""
    env = {k: v for k, v in base.items() if not is_injection_var(k) and k not in _JUPYTER_VARS}
    # Kernels must not colour tracebacks for a terminal: the agent reads plain text.
    env.setdefault("TERM", "dumb")
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    if extra:
        env.update(extra)
    return env
