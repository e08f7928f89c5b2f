"""Secret redaction before anything is stored (standard library only).

Which key names are secret (`GITHUB_TOKEN`, `db_password`, `x-api-key`, `clientSecret`, …) and what
a value is called in its marker: `secret_names.py`. Each value becomes `[REDACTED <kind>]`.

Order: the given secret values first (the server's and the hook's secret environment variables:
wherever they stand), then the value shapes (`secret_shapes.py`: provider tokens, PEM blocks,
credentials in URLs and commands, passwords said in prose, random values under secret names),
which name the kind most exactly, then the key rules here for whatever a secret key still holds.

Decisions, so that ordinary text survives:
- `max_tokens=5`, `tokens: 12`, `token_count`, `tokenizer` are not secrets (counts and tools of
  the LLM trade, and plural `tokens` is never a credential); `token=abc` is.
- `session_id` is not a secret: hook payloads use it to name the session, not to authenticate.
- the environment variables `PWD` and `OLDPWD` are directories, not passwords: they are never
  secret values (lower-case `pwd=...` in text still is).
- an unquoted value that is code rather than data is left alone: `password = getpass()`,
  `token = $GITHUB_TOKEN`, `password == "x"` (a comparison).
- a key is never a path segment: `file:///etc/passwd: scheme file` names a file, not a password.
- explicit secret values (e.g. from :func:`secret_env_values`) shorter than 6 characters, once
  stripped, are ignored: they would redact noise.
- our own messages are never run through these rules (a rule may read our words as a value);
  what they quote from outside is cleaned where it enters them (`url_without_credentials`,
  `urls_cleaned`).

Forms handled in text: `key=value`, `key: value`, `key := value`, `"key": "value"`,
`'key' => 'value'`, `--key value`, `--key=value`, `Authorization: Bearer x` (the scheme is kept)
and `Cookie: a=b; c=d` (as HTTP headers, to the end of the line or a closing quote),
`Bearer <token>`, URLs with `user:password@` (the user is kept, and may be empty), every
occurrence of the given secret values, and a prefix of one cut off by clipping (before "…"). A
quoted value with no closing quote runs to the end of the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .secret_names import MARKER_WORD, SecretKind, is_marker, is_secret_key, kind_of_key, marked_kind, marker
from .secret_shapes import SecretShapes, default_shapes

__all__ = ["is_secret_key", "redact_obj", "redact_output", "redact_text", "secret_env_values",
           "url_without_credentials", "url_without_userinfo", "urls_cleaned"]

MIN_SECRET_LENGTH = 6
CLIP_MARK = "…"
"""What `session.text.clip` appends where it cut a text: a secret value may end right before it."""

_NOT_SECRET_ENV = frozenset({"PWD", "OLDPWD"})


def secret_env_values(env: Mapping[str, str]) -> list[str]:
    """Values of variables whose name looks secret, at least 6 characters, longest first."""
    values = {
        value for name, value in env.items()
        if name not in _NOT_SECRET_ENV and is_secret_key(name) and len(value.strip()) >= MIN_SECRET_LENGTH
    }
    return sorted(values, key=lambda v: (-len(v), v))


# --- text ----------------------------------------------------------------------------------------

_KEY = r"[A-Za-z_][A-Za-z0-9_.-]*"
# The user may be empty: `redis://:password@host` is Redis's usual form.
_URL_USERINFO = re.compile(r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*):([^\s@/]+)@")
_HEADER = re.compile(
    r"(?im)\b((?:proxy-)?authorization|(?:set-)?cookie)(\s*:[ \t]*)"
    r"((?:(?:Bearer|Basic|Token|Digest|Negotiate|Bot)[ \t]+)?)([^\r\n]+)"
)
# A quoted value whose closing quote is missing runs to the end of the text: event text is clipped
# before it is redacted (`text.clip` cuts the closing quote off and appends "…"), and users leave
# quotes open. Over-redacting the rest of a clipped text is the safe side.
_QUOTED_PAIR = re.compile(
    r"([\"'])(" + _KEY + r")\1(\s*(?::|=>|=)\s*)([\"'])((?:\\.|(?!\4)[^\\])*)(?:\4|\\?\Z)", re.DOTALL
)
# A key starts a word, or follows an escaped newline or tab in a string literal (`'a=1\nTOKEN=x'`);
# never a path segment (`/etc/passwd: …`).
_PAIR = re.compile(
    r"(?:(?<![A-Za-z0-9_./\\-])|(?<=\\[nt]))(" + _KEY + r")(\s*(?::=|=|:(?!//))[ \t]*)"
    r"(\"(?:\\.|[^\"\\])*(?:\"|\\?\Z)|'(?:\\.|[^'\\])*(?:'|\\?\Z)|[^\s\"',;&<>{}\[\]()=|`]+)"
)
_FLAG = re.compile(r"(?<![\w-])(--?" + _KEY + r")([ \t]+|=)(\"[^\"]*(?:\"|\Z)|'[^']*(?:'|\Z)|[^\s\"'-][^\s\"']*)")
_BEARER = re.compile(r"\b(Bearer[ \t]+)([A-Za-z0-9._~+/=-]{8,})")
_NOT_DATA = frozenset({"none", "null", "nil", "true", "false", "undefined"})


def redact_text(text: str, secret_values: Iterable[str] = (), shapes: SecretShapes | None = None) -> str:
    """`text` with each secret replaced by `[REDACTED <kind>]`; never raises on any string, and
    redacting twice changes nothing. `shapes` defaults to detect-secrets' plugins read in this
    process (a hook passes the cached ones)."""
    shapes = shapes or default_shapes()
    text = _redact_values(text, secret_values, shapes)
    text = shapes.redact(text)
    text = _URL_USERINFO.sub(_url_userinfo, text)
    text = _redact_headers(text)
    text = _sub_keyed(_QUOTED_PAIR, 2, text, _quoted_pair)
    text = _sub_keyed(_PAIR, 1, text, _pair)
    text = _sub_keyed(_FLAG, 1, text, _flag)
    return _BEARER.sub(lambda m: m.group(1) + marker("bearer-token"), text)


def _url_userinfo(m: re.Match[str]) -> str:
    return m.group(0) if MARKER_WORD in m.group(2) else f"{m.group(1)}:{marker('url-password')}@"


# --- large outputs -------------------------------------------------------------------------------

WHOLE_TEXT_LIMIT = 64 * 1024
"""Up to this size `redact_output` is `redact_text`; beyond it, only lines that could hold a secret
are run through every rule (running them all over 8 MB of output costs ~6 s; finding the lines, ~0.4 s)."""
STORE_WHOLE_LIMIT = 8 * 1024
"""The smaller limit of writers that redact everything they store (execution records while the
cell runs, every indexed file): every rule over a 64 KB source file costs ~0.3 s, line by line a fifth."""
# A line can hold a secret only if it names one (these words, lower-cased), points at a URL's
# userinfo, runs a command whose flags carry passwords, or has a token-like run of 20 characters
# or more (every provider format detect-secrets knows is that long, except Artifactory's).
# `key` alone is no secret key name (is_secret_key), so JSON full of `"key":` takes the fast path;
# a key-named value (`signing_key=…`) is long and random, so a token-like run of 16 finds its line.
_HINTS = ("secret", "passw", "passphrase", "credential", "apikey", "api_key", "api-key", "privatekey", "private_key",
          "private-key", "accesskey", "access_key", "access-key", "key is", "key was", "key for", "key of", "auth",
          "cookie", "token", "session", "pwd", "passcode", "bearer", "@", "mysql", "mariadb", "curl", "docker",
          "podman", "nerdctl", "login", "sshpass", "pin", "akc", "-u", "--user", "_key", "-key", "key=", "key:",
          "sig=", "signature", "hooks.slack", "mongo", "redis-cli", "7z", "zip", "sqlcmd", "pass:", "…")
_TOKEN_RUNS = re.compile(r"[A-Za-z0-9_+=-]{16,}")


def redact_output(text: str, secret_values: Iterable[str] = (), shapes: SecretShapes | None = None,
                  whole_limit: int = WHOLE_TEXT_LIMIT) -> str:
    """:func:`redact_text` for output of any size (what the agent's code printed, before indexing).

    Beyond `whole_limit` the rules run line by line, on the lines with a hint of a secret
    (detect-secrets scans line by line too); PEM blocks, which span lines, and the given secret
    values are replaced in the whole text first. Only a quoted value that runs over several lines
    needs the whole text; writers on the hot path (each output batch of a cell, a kernel's log)
    pass a smaller limit and pay 35 ms per MB instead of 1.3 s.
    """
    shapes = shapes or default_shapes()
    if len(text) <= whole_limit:
        return redact_text(text, secret_values, shapes)
    text = shapes.redact_pem(_redact_values(text, secret_values, shapes))
    lines = _hinted_lines(text)
    if not lines:
        return text
    out: list[str] = []
    pos = 0
    for start, end in lines:
        out.append(text[pos:start])
        out.append(redact_text(text[start:end], (), shapes))
        pos = end
    out.append(text[pos:])
    return "".join(out)


# A secret's 20 characters are varied; a run of few distinct ones (`xxxx…`, `====…`, `0000…`) is a
# flood or a rule line, and treating every such line as hinted ran every rule over all of it (an
# 8 MB print flood took 10 s to redact instead of a fraction of one).
MIN_DISTINCT = 8


def _varied_token_runs(text: str) -> list[int]:
    """Where a line first has a run of token characters varied enough to be a secret (one per line)."""
    starts = []
    at = 0
    while (m := _TOKEN_RUNS.search(text, at)) is not None:
        at = m.end()
        if len(set(m.group())) >= MIN_DISTINCT:
            starts.append(m.start())
            line_end = text.find("\n", m.end())
            if line_end < 0:
                break
            at = line_end + 1
    return starts


def _hinted_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of runs of lines holding a hint, merged; blocking, linear in the text."""
    low = text.lower()
    starts = _varied_token_runs(text)
    for hint in _HINTS:
        at = low.find(hint)
        while at >= 0:  # one hit per line is enough: the whole line is redacted
            starts.append(at)
            line_end = low.find("\n", at)
            at = low.find(hint, line_end + 1) if line_end >= 0 else -1
    spans: list[tuple[int, int]] = []
    for at in sorted(starts):
        if spans and at < spans[-1][1]:
            continue
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if spans and start <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def _redact_values(text: str, secret_values: Iterable[str], shapes: SecretShapes) -> str:
    values = sorted({v for v in secret_values if len(v.strip()) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
    if not values:
        return text
    found = [v for v in values if v in text]
    if found:
        # One alternation, longest first, scanned left to right: no value survives in unreplaced text.
        markers = {v: marker(shapes.kind_of(v) or "secret") for v in found}
        text = re.sub("|".join(re.escape(v) for v in found), lambda m: markers[m.group(0)], text)
    return _redact_clipped(text, values) if CLIP_MARK in text else text


def _redact_clipped(text: str, values: list[str]) -> str:
    """A value cut short by clipping survives as a prefix right before "…": redact a prefix of at
    least MIN_SECRET_LENGTH characters there (the longest one found)."""
    pieces = text.split(CLIP_MARK)
    for index, piece in enumerate(pieces[:-1]):
        cut = max((next((k for k in range(min(len(v) - 1, len(piece)), MIN_SECRET_LENGTH - 1, -1)
                         if piece.endswith(v[:k])), 0) for v in values), default=0)
        if cut:
            pieces[index] = piece[:-cut] + marker("secret")
    return CLIP_MARK.join(pieces)


def _sub_keyed(pattern: re.Pattern[str], key_group: int, text: str,
               build: Callable[[re.Match[str]], str | None]) -> str:
    """Like `pattern.sub`, but a match whose key is not secret consumes only its key, so that
    `user: token=abc` still reaches `token=abc`."""
    out: list[str] = []
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        replacement = build(m)
        if replacement is None:
            out.append(text[pos:m.end(key_group)])
            pos = m.end(key_group)
        else:
            out.append(text[pos:m.start()])
            out.append(replacement)
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _redact_headers(text: str) -> str:
    """A header's value runs to the end of the line, or to the quote that opened the header
    (`curl -H 'Authorization: Bearer x' -H "Cookie: a=b"`); the scheme word is kept."""
    out: list[str] = []
    pos = 0
    while (m := _HEADER.search(text, pos)) is not None:
        value, end = m.group(4), m.end()
        opening = text[m.start() - 1:m.start()]
        if opening in ("'", '"') and opening in value:
            value = value[:value.index(opening)]
            end = m.start(4) + len(value)
        out.append(text[pos:m.start(4)])
        out.append(value if is_marker(value) else marker(_header_kind(m.group(1), m.group(3))))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _header_kind(name: str, scheme: str) -> SecretKind:
    if "cookie" in name.lower():
        return "cookie"
    return "bearer-token" if scheme.strip().lower() == "bearer" else "authorization"


def _value_marker(key: str, value: str) -> str:
    """What replaces a secret key's value: a shape's kind found in it, else the key's kind."""
    return marker(marked_kind(value) or kind_of_key(key))


def _quoted_pair(m: re.Match[str]) -> str | None:
    if not is_secret_key(m.group(2)):
        return None
    if is_marker(m.group(5)):
        return m.group(0)
    quote = m.group(4)
    return f"{m.group(1)}{m.group(2)}{m.group(1)}{m.group(3)}{quote}{_value_marker(m.group(2), m.group(5))}{quote}"


def _pair(m: re.Match[str]) -> str | None:
    key, sep, value = m.group(1), m.group(2), m.group(3)
    if not is_secret_key(key):
        return None
    if _redacted_next(m.string, m.end()):
        return m.group(0)  # `Authorization: Bearer [REDACTED bearer-token]` is done already
    if value[0] in "\"'":
        if is_marker(value[1:].rstrip(value[0])):
            return m.group(0)
        return f"{key}{sep}{value[0]}{_value_marker(key, value)}{value[0]}"
    if _is_code(value, m.string, m.end()):
        return m.group(0)
    return f"{key}{sep}{_value_marker(key, value)}"


def _redacted_next(text: str, end: int) -> bool:
    return text[end:end + 64].lstrip(" \t").startswith(MARKER_WORD)


def _flag(m: re.Match[str]) -> str | None:
    flag, gap, value = m.group(1), m.group(2), m.group(3)
    if not is_secret_key(flag.lstrip("-")):
        return None
    if MARKER_WORD in value:
        return m.group(0)
    if value[0] in "\"'":
        return f"{flag}{gap}{value[0]}{_value_marker(flag, value)}{value[0]}"
    return f"{flag}{gap}{_value_marker(flag, value)}"


def _is_code(value: str, text: str, end: int) -> bool:
    """An unquoted value that reads as code or a reference, not as a secret itself."""
    if value[0] in "$%{<" or value.lower() in _NOT_DATA:
        return True
    following = text[end:end + 1]
    return following in ("(", "[")


# --- JSON values ---------------------------------------------------------------------------------


def redact_obj(obj: Any, secret_values: Iterable[str] = (), shapes: SecretShapes | None = None) -> Any:
    """A copy of a JSON-like value: values under secret keys become a marker (whatever they are,
    except None), every other string goes through :func:`redact_text`."""
    values = tuple(secret_values)
    return _redact_obj(obj, values, shapes or default_shapes())


def _redact_obj(obj: Any, values: tuple[str, ...], shapes: SecretShapes) -> Any:
    if isinstance(obj, str):
        return redact_text(obj, values, shapes)
    if isinstance(obj, Mapping):
        return {
            key: (_keyed_marker(key, value, shapes) if isinstance(key, str) and is_secret_key(key) and value is not None
                  else _redact_obj(value, values, shapes))
            for key, value in obj.items()
        }
    if isinstance(obj, list):
        return [_redact_obj(item, values, shapes) for item in obj]
    if isinstance(obj, tuple):
        return tuple(_redact_obj(item, values, shapes) for item in obj)
    return obj


def _keyed_marker(key: str, value: Any, shapes: SecretShapes) -> str:
    if isinstance(value, str) and is_marker(value):
        return value
    return marker((shapes.kind_of(value) if isinstance(value, str) else None) or kind_of_key(key))


# --- URLs ----------------------------------------------------------------------------------------


def url_without_userinfo(url: str) -> str:
    """`url` without its `user:password@` or `token@` part: what may be stored or shown of an address
    whose credentials were only for the request (a fetched page's label, origin and base for links)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:end]
    if "@" not in authority:
        return url
    return f"{scheme}://{authority.rsplit('@', 1)[1]}{rest[end:]}"


def url_without_credentials(url: str, shapes: SecretShapes | None = None) -> str:
    """What may be stored or shown of an address whose credentials were for the request only (a
    fetched page's label, origin and base for links): without its userinfo, and with secrets in
    its query string (`?api_key=…`, a signed URL's `X-Amz-Signature=…`) or path replaced."""
    return redact_text(url_without_userinfo(url), shapes=shapes)


_URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")


def urls_cleaned(text: str, shapes: SecretShapes | None = None) -> str:
    """`text` (a message of ours that quotes addresses) with each URL in it cleaned as by
    :func:`url_without_credentials`, and nothing else touched."""
    return _URL.sub(lambda m: url_without_credentials(m.group(0), shapes), text)
