"""The bearer token of the HTTP transport: made once, kept 0600 in the data dir, rotatable.

Only the server's owner can read the file, so only the owner's processes can drive the server.
A running server re-reads the file when it changes (a stat per request, the file is read again
only when its inode, size, mtime or ctime differ), so `context-kernel token rotate` takes effect on the
next request without a restart. Comparison is constant-time, on SHA-256 digests so that not
even the length of the token shows in the timing. Standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

TOKEN_BYTES = 32


class TokenFileError(Exception):
    """The token file cannot be used (unsafe mode, another owner, unreadable); the message says why and what to do."""


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def fingerprint(token: str) -> str:
    """A short, non-secret name for a token: sessions are bound to it (never the token itself)."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def write_token(path: Path, token: str | None = None) -> str:
    """Write a new token atomically, 0600 from the first byte; returns it. Replaces an existing file."""
    token = token or new_token()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(token + "\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return token


def ensure_token(path: Path) -> str:
    """The token in `path`, made now if there is none; refuses a file others could have read."""
    if not path.exists():
        return write_token(path)
    return read_token(path)


def read_token(path: Path) -> str:
    """The token in `path`; raises TokenFileError if the file is unsafe or empty, FileNotFoundError if absent."""
    info = path.stat()
    _check_private(path, info)
    token = path.read_text(encoding="ascii", errors="replace").strip()
    if not token:
        raise TokenFileError(f"{path} is empty; run `context-kernel token rotate` to make a new token")
    return token


def _check_private(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise TokenFileError(f"{path} is not a regular file")
    if info.st_uid != os.geteuid():
        raise TokenFileError(f"{path} belongs to uid {info.st_uid}, not to this user (uid {os.geteuid()})")
    if info.st_mode & 0o077:
        raise TokenFileError(
            f"{path} is readable or writable by others (mode {stat.S_IMODE(info.st_mode):04o}): the token may have "
            "leaked. Run `context-kernel token rotate` to replace it with a new private one")


@dataclass
class _Seen:
    key: tuple[int, ...]
    digest: bytes | None
    problem: str | None


class TokenFile:
    """The token a running server accepts, re-read when the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: _Seen | None = None

    def _current(self) -> _Seen:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return _Seen((), None, f"the token file {self.path} is missing; "
                                               "run `context-kernel token rotate` to make one")
        # A rotation makes a new inode; chmod and chown change the ctime: either means "read it again".
        key = (info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        if self._seen is not None and self._seen.key == key:
            return self._seen
        try:
            token = read_token(self.path)
            seen = _Seen(key, hashlib.sha256(token.encode()).digest(), None)
        except (OSError, TokenFileError) as exc:
            seen = _Seen(key, None, str(exc))
        self._seen = seen
        return seen

    def check(self, candidate: str) -> str | None:
        """The fingerprint of the token when `candidate` is it, else None (constant time)."""
        seen = self._current()
        if seen.digest is None:
            return None
        offered = hashlib.sha256(candidate.encode()).digest()
        if hmac.compare_digest(offered, seen.digest):
            return seen.digest.hex()[:16]  # == fingerprint(token)
        return None

    def problem(self) -> str | None:
        """Why no token is accepted right now (file missing or unsafe), or None."""
        return self._current().problem
