"""Settings: one frozen value built by the CLI from the environment; the core never reads the process environment."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .locations import UserDirs

# Why 8 KB: about 2,000 tokens — enough for a table or a traceback, small enough that a few calls
# per turn do not crowd out the agent's reasoning. Everything beyond it is recorded (and indexed),
# never lost.
DEFAULT_RETURN_BUDGET = 8 * 1024
# The reference kills a child at 100 MB of output; we interrupt the cell at the same cap.
DEFAULT_HARD_CAP = 100 * 1024 * 1024
# One ctx_search reply: room for three or four snippets of ~1.5 KB, not a page of documentation.
DEFAULT_SEARCH_BUDGET = 6 * 1024
# Output longer than this with an `intent` is indexed and answered with the matching lines.
INTENT_THRESHOLD = 5 * 1024
# The whole reply to a call with an intent, and what its header and notes take of it: the point of
# an intent is a few lines, not a page of lines sharing one word.
INTENT_REPLY_BUDGET = 4 * 1024
INTENT_REPLY_OVERHEAD = 700
# A section sent by ctx_search is only named when asked again; after this long (or a compaction a
# hook reported) the agent's context may no longer hold it, so it is sent again.
DEFAULT_RESEND_AFTER_S = 3600.0
DEFAULT_TIMEOUT_MS = 120_000
# Warm from the first call: python plus the project's two most recent other languages.
DEFAULT_PREWARM = 3
MAX_TIMEOUT_MS = 3_600_000
DEFAULT_IDLE_CULL_S = 1800.0
DEFAULT_MAX_KERNELS = 16
DEFAULT_PROGRESS_S = 5.0
DEFAULT_FETCH_MAX_BODY = 50 * 1024 * 1024


# Retention (store/retention.py says what goes): records of sessions idle this long, the database's
# size beyond which the least recently active sessions go, and how many kernel logs are kept.
DEFAULT_RETENTION_DAYS = 30.0
DEFAULT_MAX_DB_MB = 512
DEFAULT_MAX_KERNEL_LOGS = 100

DB_FILE = "context-kernel.sqlite3"
HTTP_TOKEN_FILE = "http-token"


def database_path(home: Path) -> Path:
    """The database of a data dir; hooks, which have no Settings, find it the same way."""
    return home / DB_FILE


@dataclass(frozen=True)
class GatewaySettings:
    """A Jupyter Enterprise Gateway / Kernel Gateway (or any server of `/api/kernels`) that runs every kernel."""

    url: str
    """Base URL, e.g. http://eg.example:8888 (ws:// or wss:// for the channels follows from it)."""
    auth_header: tuple[str, str] | None = None
    """(name, value) sent with every request and the WebSocket upgrade, e.g. ("Authorization", "token …")."""
    connect_timeout_s: float = 10.0
    request_timeout_s: float = 60.0
    """A REST call (interrupt, shutdown, kernelspecs); a kernel start waits `kernel_start_timeout_s` instead."""
    kernel_env: dict[str, str] = field(default_factory=dict)
    """Sent with every kernel start (`--gateway-kernel-env`): Enterprise Gateway passes KERNEL_* variables
    (KERNEL_USERNAME, KERNEL_WORKING_DIR, KERNEL_NAMESPACE, …) and those it allows to the kernel."""


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to know, decided once at start-up."""

    home: Path
    """All state lives here: the SQLite database, kernel logs, connection files."""
    project_dir: Path
    """Working directory of every kernel; ctx_execute_file refuses paths outside it."""
    return_budget: int = DEFAULT_RETURN_BUDGET
    search_budget: int = DEFAULT_SEARCH_BUDGET
    resend_after_s: float = DEFAULT_RESEND_AFTER_S
    """CONTEXT_KERNEL_RESEND_AFTER_S: sections sent longer ago than this count as forgotten."""
    hard_output_cap: int = DEFAULT_HARD_CAP
    default_timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_timeout_ms: int = MAX_TIMEOUT_MS
    kernel_idle_cull_s: float = DEFAULT_IDLE_CULL_S
    max_kernels: int = DEFAULT_MAX_KERNELS
    prewarm_kernels: int = 0
    """Kernels started once a client connects, before its first call: python, then the project's most
    recently used languages. The CLI's default is DEFAULT_PREWARM; 0 (the tests' default) starts none."""
    progress_interval_s: float = DEFAULT_PROGRESS_S
    kernel_start_timeout_s: float = 60.0
    fetch_strict: bool = False
    """CTX_FETCH_STRICT=1: also refuse loopback and private addresses (hosted or CI use)."""
    fetch_max_body: int = DEFAULT_FETCH_MAX_BODY
    fetch_proxy: str | None = None
    """Proxy for fetches; proxy environment variables are ignored unless the CLI is told to use them."""
    extra_kernel_env: dict[str, str] = field(default_factory=dict)
    """Variables added to every kernel's environment (after scrubbing)."""
    user_home: Path | None = None
    """The user's home directory (global client settings, deny rules); None: do not look there."""
    claude_settings: Path | None = None
    """Claude Code's global settings file (deny rules); None: `~/.claude/settings.json` under user_home."""
    client_dirs: UserDirs | None = None
    """The clients' user directories (CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME); None: under user_home."""
    base_env: dict[str, str] | None = None
    """The environment kernels inherit, before scrubbing; None means the server's own."""
    retention_days: float = DEFAULT_RETENTION_DAYS
    """Records of sessions idle longer than this are removed at start and daily; 0 keeps them all."""
    max_db_mb: int = DEFAULT_MAX_DB_MB
    """A database bigger than this loses its least recently active sessions first; 0: no cap."""
    max_kernel_logs: int = DEFAULT_MAX_KERNEL_LOGS
    """Kernel log files kept in `log_dir`, newest first; 0: no cap."""
    python: str | None = None
    """The python kernel's interpreter, chosen explicitly: a python, an environment's directory, or a
    command on PATH (`serve --python`, CONTEXT_KERNEL_PYTHON); None: found (kernels/interpreters.py)."""
    python_from: str = "--python"
    """Where `python` was set, as the user named it (for doctor and error messages)."""
    semantic: bool = True
    """Semantic recall when the `semantic` extra is installed (CONTEXT_KERNEL_SEMANTIC=0: words only)."""
    semantic_model: Path | None = None
    """Another embedding model's directory (sentence-transformers or fastembed layout); None: the default."""
    semantic_nice: int = 19
    """The embedder's niceness (CONTEXT_KERNEL_SEMANTIC_NICE). 19 (the default) also asks for SCHED_IDLE: it
    embeds only on a core nothing else wants, so on a machine busy on every core the vectors wait (search
    ranks by words meanwhile); 0 embeds at the server's own priority."""
    gateway: GatewaySettings | None = None
    """`serve --gateway-url`: every kernel runs on this gateway instead of as a child of the server."""
    live_notebooks: bool = True
    """Each session's notebook rewritten after every call, for a person to watch (notebooks/live.py)."""
    live_dir_override: Path | None = None
    """Where those go (CONTEXT_KERNEL_LIVE_NOTEBOOKS=<dir>); None: `live_dir`'s default."""

    @property
    def db_path(self) -> Path:
        return database_path(self.home)

    @property
    def http_token_file(self) -> Path:
        """The bearer token every HTTP request must carry (0600; `context-kernel token rotate`)."""
        return self.home / HTTP_TOKEN_FILE

    @property
    def runtime_dir(self) -> Path:
        """Kernel connection files (ipc sockets live next to them)."""
        return self.home / "runtime"

    @property
    def kernels_dir(self) -> Path:
        """Kernelspecs this server writes (the python kernel of a project's environment)."""
        return self.home / "kernels"

    @property
    def overlays_dir(self) -> Path:
        """ipykernel and its dependencies, lent to project environments that lack them (symlinks)."""
        return self.home / "python-overlays"

    @property
    def log_dir(self) -> Path:
        return self.home / "logs"

    @property
    def export_dir(self) -> Path:
        """Where ctx_export and `context-kernel export` write notebooks unless told otherwise."""
        return self.home / "exports"

    @property
    def live_dir(self) -> Path:
        """Where the live notebooks are written: one folder per session."""
        return self.live_dir_override or self.export_dir / "live"

    @property
    def insight_page(self) -> Path:
        """The page ctx_insight and `context-kernel insight` write unless told otherwise."""
        return self.home / "insight.html"
