"""Secrets recognised by the shape of the value, whatever key (if any) stands before it.

`redact.py` finds secrets by their key (`token=`, `Authorization:`); this module finds the values
themselves: provider tokens pasted into a prompt, a token as URL userinfo or in a query string, a
PEM block, a password given to a command (`mysql -pX`, `curl -u user:X`), a random-looking value
under a name with `key`, `secret`, `token` or `password` in it. Each found value is named by its
kind (`secret_names.SecretKind`); overlapping finds are merged and named by the earlier rule.

Two sources of shapes:
- **our own rules** (`shape_rules.py`, first, so their kinds name what they find): the provider
  formats detect-secrets lacks or cuts short (see that module), the AWS secret key written next to
  its access key id or under its name, credentials in URLs and commands, passwords said in prose,
  and keyed random values.
- **detect-secrets' plugins** (Yelp's scanner, the maintained list of provider formats: Twilio,
  SendGrid, Discord, Mailchimp, Square, Artifactory, …). Only its regex plugins are used; left out
  are the entropy plugins (git hashes, ids and digests are what people search for), its keyword
  plugin (that is redact.py's job), `IPPublicDetector` (an address is no credential),
  `BasicAuthDetector` (redact.py's URL rule keeps the user name) and `PrivateKeyDetector` (it finds
  the header line; the PEM rule below takes the whole block).

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
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from .secret_names import KINDS, MARKER, SecretKind, marker
from .shape_rules import AWS_KEY_ID_NEEDLES, OWN_RULES, Found, keyed_values, mixed, trimmed

REDACTED = "[REDACTED]"
"""The bare marker of older versions; markers now name their kind (`secret_names.marker`)."""
CACHE_NAME = "secret-shapes.json"
CACHE_FORMAT = 2
"""Version of the cache file's layout: 2 stores each pattern's kind with it."""

_SKIPPED_PLUGINS = frozenset({"IPPublicDetector", "BasicAuthDetector", "PrivateKeyDetector"})
_MIN_GROUP = 8
"""A plugin pattern's first group is the value when it is this long; shorter groups are prefixes
(GitHub's `(ghp|gho|…)_…`), and then the whole match is the value."""
_LIBRARY_RANK = 1000
"""Where detect-secrets' patterns stand among the rules: after ours, which name kinds more exactly."""

LibraryPattern = tuple[str, int, str]
"""(regex source, flags, kind) of one detect-secrets pattern."""

_PEM = re.compile(r"(-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----)(.*?)(-----END \2-----|\Z)", re.DOTALL)
_AWS_KEY_ID = re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_WINDOW = 200
"""How far around an access key id its secret key is looked for: the two are pasted together."""
_PRIVATE_KEY = marker("private-key")


class SecretShapes:
    """Compiled shapes; `spans(text)` finds the secret values, `redact(text)` replaces them."""

    def __init__(self, library: list[LibraryPattern]) -> None:
        self.library = library
        self._library = [(re.compile(source, flags), _known(kind), _LIBRARY_NEEDLES.get(kind, ()))
                         for source, flags, kind in library]

    def redact_pem(self, text: str) -> str:
        """Private-key blocks keep their armour lines; the body goes (to the end, if cut off)."""
        if "-----BEGIN" not in text:
            return text
        return _PEM.sub(lambda m: m.group(1) + (_PRIVATE_KEY if m.group(3).strip() and m.group(3) != _PRIVATE_KEY
                                                else m.group(3)) + m.group(4), text)

    def redact(self, text: str) -> str:
        text = self.redact_pem(text)
        spans = self.merged(text)
        if not spans:
            return text
        out: list[str] = []
        pos = 0
        for start, end, kind in spans:
            out.append(text[pos:start])
            out.append(marker(kind))
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def kind_of(self, value: str) -> SecretKind | None:
        """The kind of secret `value` is as a whole (a secret env value, a key's value), if a shape knows it."""
        core = value.strip()
        spans = self.merged(core)
        return spans[0][2] if len(spans) == 1 and spans[0][:2] == (0, len(core)) else None

    def merged(self, text: str) -> list[Found]:
        """The secret values of `text`, overlapping ones merged (named by the earliest rule among
        them), none touching a marker already there."""
        taken = [m.span() for m in MARKER.finditer(text)]
        found = sorted((s for s in self.spans(text) if not any(s[0] < e and b < s[1] for b, e in taken)),
                       key=lambda s: (s[0], s[3]))
        merged: list[tuple[int, int, SecretKind, int]] = []
        for start, end, kind, rank in found:
            if merged and start < merged[-1][1]:
                last = merged[-1]
                merged[-1] = (last[0], max(last[1], end), *((kind, rank) if rank < last[3] else last[2:]))
            else:
                merged.append((start, end, kind, rank))
        return [(start, end, kind) for start, end, kind, _ in merged]

    def spans(self, text: str) -> Iterator[tuple[int, int, SecretKind, int]]:
        """(start, end, kind, rank) of every secret value in `text`; lower ranks name overlaps."""
        low = text.lower()
        for rank, rule in enumerate(OWN_RULES):
            for start, end, kind in rule.find(text, low):
                yield start, end, kind, rank
        keyed_rank = len(OWN_RULES)
        for start, end, kind in keyed_values(text):
            yield start, end, kind, keyed_rank
        for m in _AWS_KEY_ID.finditer(text) if any(n in low for n in AWS_KEY_ID_NEEDLES) else ():
            since, until = max(0, m.start() - _AWS_WINDOW), m.end() + _AWS_WINDOW
            for s in _AWS_SECRET.finditer(text, since, until):
                if mixed(s.group()) and any(c.isupper() for c in s.group()) and any(c.islower() for c in s.group()):
                    yield s.start(), s.end(), "aws-secret", keyed_rank + 1
        for offset, (pattern, kind, needles) in enumerate(self._library):
            if needles and not any(n in low for n in needles):
                continue
            for m in pattern.finditer(text):
                group = 1 if m.re.groups and m.group(1) and len(m.group(1)) >= _MIN_GROUP else 0
                for start, end, _ in trimmed(text, m.start(group), m.end(group), kind):
                    yield start, end, kind, _LIBRARY_RANK + offset


# Lower-case strings one of which every match of the plugins of a kind holds (their patterns are
# case-insensitive at most): a text without any skips them. A kind not listed is always run.
_LIBRARY_NEEDLES: dict[str, tuple[str, ...]] = {
    "aws-access-key-id": AWS_KEY_ID_NEEDLES, "aws-secret": ("aws",), "artifactory-token": ("akc", "ap"),
    "azure-storage-key": ("accountkey=",), "cloudant-key": ("cl",), "discord-token": (".",),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "gitlab-token": ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-", "glimt-", "glptt-",
                     "glagent-", "gloas-"),
    "ibm-cloud-key": ("key", "pwd", "pass", "token", "secret"), "jwt": ("eyj",), "mailchimp-key": ("-us",),
    "npm-token": ("_authtoken",), "openai-key": ("t3blbkfj",), "pypi-token": ("pypi-",), "sendgrid-key": ("sg.",),
    "slack-token": ("xox",), "slack-webhook": ("hooks.slack.com",), "softlayer-key": ("softlayer", "sl"),
    "square-secret": ("sq0csp-",), "stripe-key": ("k_live_",), "telegram-token": (":",), "twilio-key": ("ac", "sk"),
}


def _known(kind: str) -> SecretKind:
    return kind if kind in KINDS else "secret"  # type: ignore[return-value]  # checked against the literal


# --- where the library's patterns come from ------------------------------------------------------


def library_patterns() -> list[LibraryPattern]:
    """(source, flags, kind) of detect-secrets' regex plugins, less the skipped ones. Slow: imports it."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    found: list[LibraryPattern] = []
    plugins: list[type[Any]] = sorted(get_mapping_from_secret_type_to_class().values(), key=lambda p: p.__name__)
    for plugin in plugins:
        if not issubclass(plugin, RegexBasedDetector) or plugin.__name__ in _SKIPPED_PLUGINS:
            continue
        for pattern in plugin().denylist:
            found.append((pattern.pattern, int(pattern.flags), library_kind(str(plugin.secret_type), pattern.pattern)))
    return found


# detect-secrets' secret types, by the kind our markers name them.
_LIBRARY_KINDS: dict[str, SecretKind] = {
    "AWS Access Key": "aws-access-key-id", "Artifactory Credentials": "artifactory-token",
    "Azure Storage Account access key": "azure-storage-key", "Cloudant Credentials": "cloudant-key",
    "Discord Bot Token": "discord-token", "GitHub Token": "github-token", "GitLab Token": "gitlab-token",
    "IBM Cloud IAM Key": "ibm-cloud-key", "IBM COS HMAC Credentials": "ibm-cloud-key", "JSON Web Token": "jwt",
    "Mailchimp Access Key": "mailchimp-key", "NPM tokens": "npm-token", "OpenAI Token": "openai-key",
    "PyPI Token": "pypi-token", "SendGrid API Key": "sendgrid-key", "Slack Token": "slack-token",
    "SoftLayer Credentials": "softlayer-key", "Square OAuth Secret": "square-secret",
    "Stripe Access Key": "stripe-key", "Telegram Bot Token": "telegram-token", "Twilio API Key": "twilio-key",
}


def library_kind(secret_type: str, source: str) -> SecretKind:
    """The kind of what one detect-secrets pattern finds (a plugin it adds later: `secret`)."""
    kind = _LIBRARY_KINDS.get(secret_type, "secret")
    if kind == "aws-access-key-id" and "(" in source.replace("(?:", ""):
        return "aws-secret"  # the AWS plugin's second pattern captures a 40-character secret key
    if kind == "slack-token" and "hooks" in source:
        return "slack-webhook"
    return kind


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
        if doc.get("detect_secrets") == version and doc.get("format") == CACHE_FORMAT:
            return SecretShapes([(str(s), int(f), str(k)) for s, f, k in doc["patterns"]])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing, torn, or from another version or layout: rebuilt below
    shapes = default_shapes()
    _write_atomically(path, json.dumps({"detect_secrets": version, "format": CACHE_FORMAT,
                                        "patterns": shapes.library}))
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
