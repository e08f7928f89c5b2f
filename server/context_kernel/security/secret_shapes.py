"""Secrets recognised by the shape of the value, whatever key (if any) stands before it.

`redact.py` finds secrets by their key (`token=`, `Authorization:`); this module finds the values
themselves: provider tokens pasted into a prompt, a token as URL userinfo, a PEM block, a password
given to a command-line flag that has no secret-sounding name (`mysql -pX`, `curl -u user:X`).

Two sources of shapes:
- **detect-secrets' plugins** (Yelp's scanner, the maintained list of provider formats: AWS,
  GitHub, GitLab, Slack, Stripe, Twilio, SendGrid, JWT, npm, PyPI, …). Only its regex plugins are
  used; left out are the entropy plugins (git hashes, ids and digests are what people search for),
  its keyword plugin (that is redact.py's job), `IPPublicDetector` (an address is no credential),
  `BasicAuthDetector` (redact.py's URL rule keeps the user name) and `PrivateKeyDetector` (it finds
  the header line; the PEM rule below takes the whole block).
- **our own rules** for what detect-secrets 1.5 does not know, each a format it lacks rather than a
  copy of one it has: fine-grained GitHub tokens (`github_pat_`), Anthropic and current OpenAI
  keys (`sk-ant-`, `sk-proj-`, `sk-…`), Google API keys (`AIza`), the AWS secret key written next
  to its access key id (no key name, so detect-secrets' AWS rule cannot see it), a token as URL
  userinfo, PEM private-key blocks, passwords of `mysql -p`, `curl -u`, `docker login -p`,
  `sshpass -p`, and passwords said in prose ("my password is hunter2").

Importing detect-secrets costs ~110 ms (it pulls in `requests`), about twice a whole hook call, and a
hook is a new process on every tool call. So the plugins' patterns are read once per installed
detect-secrets version and kept as JSON in a cache directory (the hooks pass theirs); a process
that finds the cache compiles ~40 regexes instead. The server, which pays the import once, reads
the plugins directly.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

REDACTED = "[REDACTED]"
CACHE_NAME = "secret-shapes.json"

_SKIPPED_PLUGINS = frozenset({"IPPublicDetector", "BasicAuthDetector", "PrivateKeyDetector"})
# A plugin's match may include the character before or after the value (Artifactory's
# `(?:\s|=|:|"|^)AKC…(?:\s|"|$)`); that character is not part of the secret.
_EDGE = " \t\r\n=:\"'(),"
_MIN_GROUP = 8
"""A plugin pattern's first group is the value when it is this long; shorter groups are prefixes
(GitHub's `(ghp|gho|…)_…`), and then the whole match is the value."""


@dataclass(frozen=True)
class _Rule:
    """One of our rules: `pattern`, whose group `group` is the secret when `accept` agrees."""

    pattern: re.Pattern[str]
    group: int = 0
    accept: Callable[[str], bool] | None = None
    trim: str = ""
    """characters cut off the value's ends besides quotes and separators (prose: its punctuation)"""


def _mixed(value: str) -> bool:
    """Letters and digits both: what random tokens have and words (`sk-learn-classifier`) lack."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_PROSE_NOT_VALUES = frozenset({
    "a", "an", "the", "not", "no", "now", "wrong", "incorrect", "correct", "required", "set", "empty",
    "missing", "invalid", "expired", "stored", "in", "being", "too", "still", "also", "here", "there",
    "saved", "changed", "reset", "fine", "ok", "okay", "same", "different", "needed", "optional",
    "blank", "hidden", "encrypted", "hashed", "masked", "unknown", "null", "none", "never", "always",
    "only", "just", "usually", "probably", "given", "provided", "sent", "shown", "printed", "logged",
    "visible", "long", "short", "strong", "weak", "secure", "insecure", "from", "at", "on", "by", "for",
    "what", "which", "that", "this", "it", "its", "your", "my", "our", "their", "his", "her", "something",
    "used", "generated", "random", "rotated", "revoked", "valid", "good", "bad",
    "right", "case-sensitive", "very", "so", "then", "and", "or", "but", "if", "when", "where",
    "how", "why", "be", "been", "read", "written", "kept", "available", "unavailable", "accepted", "rejected",
})
_PROSE_PUNCT = ".,;:!?)\"'`"


def _prose_password(value: str) -> bool:
    """Anything but a common word (`the password is never printed`) or a reference (`$PW`, `f()`)."""
    core = value.strip(_PROSE_PUNCT)
    return core != "" and core.lower() not in _PROSE_NOT_VALUES and core[0] not in "$%{<" and "(" not in core


def _prose_token(value: str) -> bool:
    """`the token is expired` is no token: a token said in prose is long and mixes letters and digits."""
    core = value.strip(_PROSE_PUNCT)
    return len(core) >= 8 and _mixed(core) and _prose_password(core)


# A command starts a word, or follows an escaped newline or tab inside a string literal (code that
# holds `'…\nmysql -pX'` is as common as the command itself).
_CMD = r"(?:(?<![\w-])|(?<=\\[nt]))"

_OWN_RULES: tuple[_Rule, ...] = (
    _Rule(re.compile(r"github_pat_[A-Za-z0-9_]{22,}")),
    _Rule(re.compile(r"(?<![A-Za-z0-9_-])sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
          accept=lambda v: _mixed(v[3:])),
    _Rule(re.compile(r"AIza[0-9A-Za-z_-]{35}")),
    # A token alone as URL userinfo (`https://<token>@github.com/…`); user names (`git@`, `bob@`)
    # are short or wordy, a token is long and mixes letters with digits.
    _Rule(re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://([^\s:/@\[\]]{16,})@"), group=1, accept=_mixed),
    _Rule(re.compile(_CMD + r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b"
                     r"[^\n|;&]*?(?<!\S)-p([^\s'\"]+|'[^']*'|\"[^\"]*\")"), group=1),
    # `-u 1000:1000` (docker run, chown-like tools) is a uid:gid, not a user and a password.
    _Rule(re.compile(r"(?<!\S)(?:-u|--user|--proxy-user)(?:[ \t]+|=)?(?!\d+:\d+(?!\S))['\"]?[^\s:'\"]*:([^\s'\"]+)"),
          group=1),
    _Rule(re.compile(_CMD + r"(?:docker|podman|nerdctl|buildah|skopeo|helm|oras)\b[^\n|;&]*?\blogin\b[^\n|;&]*?"
                     r"(?<!\S)-p(?:[ \t]+|=)?['\"]?([^\s'\"]+)"), group=1),
    _Rule(re.compile(_CMD + r"sshpass\b[^\n|;&]*?(?<!\S)-p[ \t]*['\"]?([^\s'\"]+)"), group=1),
    _Rule(re.compile(r"(?i)\b(?:password|passwd|passphrase|passcode|pwd|pin)\b(?:\s+(?:for|of)\s+\S+)?"
                     r"\s+(?:is|was|to)\s+['\"`]?([^\s'\"`]+)"), group=1, accept=_prose_password, trim=_PROSE_PUNCT),
    _Rule(re.compile(r"(?i)\b(?:token|secret|api[ _-]?key|access[ _-]?key|key)\b(?:\s+(?:for|of)\s+\S+)?"
                     r"\s+(?:is|was)\s+['\"`]?([^\s'\"`]+)"), group=1, accept=_prose_token, trim=_PROSE_PUNCT),
)

_PEM = re.compile(r"(-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----)(.*?)(-----END \2-----|\Z)", re.DOTALL)
_AWS_KEY_ID = re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_WINDOW = 200
"""How far around an access key id its secret key is looked for: the two are pasted together."""


class SecretShapes:
    """Compiled shapes; `spans(text)` finds the secret values, `redact(text)` replaces them."""

    def __init__(self, library: list[tuple[str, int]]) -> None:
        self.library = library
        self._library = [re.compile(source, flags) for source, flags in library]

    def redact_pem(self, text: str) -> str:
        """Private-key blocks keep their armour lines; the body goes (to the end, if cut off)."""
        if "-----BEGIN" not in text:
            return text
        return _PEM.sub(lambda m: m.group(1) + (REDACTED if m.group(3).strip() else m.group(3)) + m.group(4), text)

    def redact(self, text: str) -> str:
        text = self.redact_pem(text)
        spans = sorted(self.spans(text))
        if not spans:
            return text
        out: list[str] = []
        pos = 0
        for start, end in spans:
            if end <= pos:
                continue
            start = max(start, pos)
            out.append(text[pos:start])
            out.append(REDACTED)
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """(start, end) of every secret value in `text` (overlapping spans are merged by redact)."""
        for pattern in self._library:
            for m in pattern.finditer(text):
                group = 1 if m.re.groups and m.group(1) and len(m.group(1)) >= _MIN_GROUP else 0
                yield from _trimmed(text, m.start(group), m.end(group))
        for rule in _OWN_RULES:
            for m in rule.pattern.finditer(text):
                value = m.group(rule.group)
                if value and REDACTED not in value and (rule.accept is None or rule.accept(value)):
                    yield from _trimmed(text, m.start(rule.group), m.end(rule.group), rule.trim)
        for m in _AWS_KEY_ID.finditer(text):
            low, high = max(0, m.start() - _AWS_WINDOW), m.end() + _AWS_WINDOW
            for s in _AWS_SECRET.finditer(text, low, high):
                if _mixed(s.group()) and any(c.isupper() for c in s.group()) and any(c.islower() for c in s.group()):
                    yield s.span()


def _trimmed(text: str, start: int, end: int, extra: str = "") -> Iterator[tuple[int, int]]:
    strip = _EDGE + extra
    while start < end and text[start] in strip:
        start += 1
    while end > start and text[end - 1] in strip:
        end -= 1
    if end > start and REDACTED not in text[start:end]:
        yield start, end


# --- where the library's patterns come from ------------------------------------------------------


def library_patterns() -> list[tuple[str, int]]:
    """(source, flags) of detect-secrets' regex plugins, less the skipped ones. Slow: imports it."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    found: list[tuple[str, int]] = []
    plugins: list[type[Any]] = sorted(get_mapping_from_secret_type_to_class().values(), key=lambda p: p.__name__)
    for plugin in plugins:
        if not issubclass(plugin, RegexBasedDetector) or plugin.__name__ in _SKIPPED_PLUGINS:
            continue
        for pattern in plugin().denylist:
            found.append((pattern.pattern, int(pattern.flags)))
    return found


def library_version() -> str:
    """detect-secrets' version, read from its `__version__.py` without importing the package."""
    spec = importlib.util.find_spec("detect_secrets")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("detect-secrets is not installed", name="detect_secrets")
    version_file = Path(next(iter(spec.submodule_search_locations))) / "__version__.py"
    match = re.search(r"VERSION\s*=\s*['\"]([^'\"]+)", version_file.read_text())
    return match.group(1) if match else f"unknown-{version_file.stat().st_mtime_ns}"


@lru_cache(maxsize=1)
def default_shapes() -> SecretShapes:
    """The shapes for a long-lived process (the server): the plugins read directly, once."""
    return SecretShapes(library_patterns())


def cached_shapes(cache_dir: Path) -> SecretShapes:
    """The shapes for a short-lived process (a hook): the plugins' patterns from `cache_dir`,
    written there on a miss (or when detect-secrets was upgraded)."""
    version = library_version()
    path = cache_dir / CACHE_NAME
    try:
        doc = json.loads(path.read_text())
        if doc.get("detect_secrets") == version:
            return SecretShapes([(str(s), int(f)) for s, f in doc["patterns"]])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing, torn or from another version: rebuilt below
    shapes = default_shapes()
    _write_atomically(path, json.dumps({"detect_secrets": version, "patterns": shapes.library}))
    return shapes


def _write_atomically(path: Path, text: str) -> None:
    """Best effort: a cache that cannot be written only costs the next process the import."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-shapes-")
        try:
            with os.fdopen(fd, "w") as out:
                out.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass
