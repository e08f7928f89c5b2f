"""The data dir: where it is, and that only its owner can read it.

Everything in it is private: what the agent ran and printed, the session memory of hooks, kernel
logs, fetched pages, the HTTP token. So the directory and every directory we make in it are 0700,
and every file we write is 0600 (the database's -wal and -shm follow the database: SQLite gives
them its mode). A data dir made by an older version, or by hand, is tightened when a server or
command starts (`tighten`), and says so once.

Standard library and plain strings only: the hooks' first step (one process per tool call of the
agent) finds the data dir here before anything heavier is imported. `locations.data_home` is the
same rule as a Path.
"""

from __future__ import annotations

import _thread
import os
import stat

from .wording import counted

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hooks' first step
if TYPE_CHECKING:
    from collections.abc import Mapping

DATA_DIR_VAR = "CONTEXT_KERNEL_HOME"
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_OTHERS = 0o077  # the group's and everyone else's bits


def data_dir(env: Mapping[str, str]) -> str:
    """All state: `CONTEXT_KERNEL_HOME`, else `$XDG_DATA_HOME/context-kernel`, else `~/.local/share/context-kernel`."""
    if env.get(DATA_DIR_VAR):
        return os.path.abspath(os.path.expanduser(env[DATA_DIR_VAR]))
    data = env.get("XDG_DATA_HOME") or os.path.join(home_dir(env), ".local", "share")
    return os.path.join(data, "context-kernel")


def home_dir(env: Mapping[str, str]) -> str:
    """`HOME`, else the password database's entry for this user (raises RuntimeError if neither exists)."""
    home = env.get("HOME") or os.path.expanduser("~")
    if home.startswith("~"):
        raise RuntimeError("Could not determine home directory.")
    return home


def private_dir(home: str | os.PathLike[str], *parts: str) -> str:
    """The data dir, or a directory in it (`parts` below it), made 0700 where missing; returns its path.

    What is above the data dir is made as `mkdir -p` would (it is not ours); the data dir and
    everything below it that we make is 0700.
    """
    path = os.fspath(home)
    try:
        os.mkdir(path, PRIVATE_DIR)
    except FileExistsError:
        pass
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _mkdir(path)
    for part in parts:
        for name in part.split("/"):
            path = os.path.join(path, name)
            _mkdir(path)
    return path


def _mkdir(path: str) -> None:
    os.makedirs(path, PRIVATE_DIR, exist_ok=True)  # its parent exists: only this one is made


def open_private(path: str | os.PathLike[str], flags: int) -> int:
    """`os.open` of a file in the data dir: created 0600."""
    return os.open(path, flags | os.O_CREAT, PRIVATE_FILE)


def write_private(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace a file's content: a file of its own (0600) renamed over it, so readers never see half of it."""
    path = os.fspath(path)
    tmp = f"{path}.{os.getpid()}.{_thread.get_ident()}.tmp"
    fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
    try:
        with open(fd, "wb", closefd=False) as out:
            out.write(data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def keep_private(path: str | os.PathLike[str]) -> bool:
    """Take the group's and everyone else's bits off an existing file; True when it had some."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        if not mode & _OTHERS:
            return False
        os.chmod(path, mode & ~_OTHERS)
    except OSError:
        return False  # missing, or not ours to change
    return True


def tighten(home: str | os.PathLike[str], leave: tuple[str, ...] = ()) -> str | None:
    """Make an existing data dir private: 0700 for it and the directories in it, no group or other
    bits on anything else (symbolic links are not followed). One line saying what changed, or None.

    `leave`: files (relative to the data dir) whose mode is someone else's to judge: the HTTP token,
    which `serve --transport http` refuses when others could read it (it may have leaked: rotate it).
    """
    root = os.fspath(home)
    try:
        before = stat.S_IMODE(os.stat(root).st_mode)
    except OSError:
        return None  # not made yet: whoever makes it makes it 0700
    dirs = files = 0
    if before & _OTHERS:
        os.chmod(root, PRIVATE_DIR)
    for folder, subdirs, names in os.walk(root):
        for name in subdirs + names:
            path = os.path.join(folder, name)
            if os.path.relpath(path, root) in leave:
                continue
            try:
                found = os.lstat(path)
            except OSError:
                continue  # gone meanwhile
            mode = stat.S_IMODE(found.st_mode)
            if stat.S_ISLNK(found.st_mode) or not mode & _OTHERS:
                continue
            try:
                os.chmod(path, PRIVATE_DIR if stat.S_ISDIR(found.st_mode) else mode & ~_OTHERS)
            except OSError:
                continue  # not ours (another user's file in a shared dir): left as it is
            if stat.S_ISDIR(found.st_mode):
                dirs += 1
            else:
                files += 1
    if not before & _OTHERS and not dirs and not files:
        return None
    done = []
    if before & _OTHERS:
        done.append(f"the data dir {root} was {before:04o}, now {PRIVATE_DIR:04o}")
    if dirs or files:
        done.append(f"{counted(dirs, 'directory', 'directories')} and {counted(files, 'file')} in "
                    f"{'it' if before & _OTHERS else f'the data dir {root}'} could be read by other users, "
                    "now only by you")
    return "made private: " + "; ".join(done)
