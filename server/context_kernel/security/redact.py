"""Secret redaction before anything is stored (standard library only).

What counts as a secret key (case-insensitive, also inside longer names such as `GITHUB_TOKEN`,
`db_password`, `x-api-key`, `clientSecret`): `secret`, `password`, `passwd`, `passphrase`,
`credential(s)`, `api_key`/`apikey`/`api-key`, `private_key`, `access_key`, `authorization`,
`auth`, `cookie`/`set-cookie`; `token` and `session` only as the last part of a name
(`auth_token`, `user_session`, Django's `sessionid`), and `pwd` only as the whole key.

Decisions, so that ordinary text survives:
- `max_tokens=5`, `tokens: 12`, `token_count`, `tokenizer` are not secrets (counts and tools of
  the LLM trade, and plural `tokens` is never a credential); `token=abc` is.
- `session_id` is not a secret: hook payloads use it to name the session, not to authenticate.
- the environment variables `PWD` and `OLDPWD` are directories, not passwords: they are never
  secret values (lower-case `pwd=...` in text still is).
- an unquoted value that is code rather than data is left alone: `password = getpass()`,
  `token = $GITHUB_TOKEN`, `password == "x"` (a comparison).
- explicit secret values (e.g. from :func:`secret_env_values`) shorter than 6 characters, once
  stripped, are ignored: they would redact noise.

Forms handled in text: `key=value`, `key: value`, `key := value`, `"key": "value"`,
`'key' => 'value'`, `--key value`, `--key=value`, `Authorization: Bearer x` (the scheme is kept)
and `Cookie: a=b; c=d` (as HTTP headers, to the end of the line or a closing quote),
`Bearer <token>`, URLs with `user:password@` (the user is kept, and may be empty), every
occurrence of the given secret values, and a prefix of one cut off by clipping (before "…"). A
quoted value with no closing quote runs to the end of the text. Values are replaced by `[REDACTED]`.

After the key rules, values are recognised by their shape (provider tokens, PEM blocks, passwords
of `mysql -p`/`curl -u`/`docker login -p`, passwords said in prose): `secret_shapes.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .secret_shapes import REDACTED, SecretShapes, default_shapes

MIN_SECRET_LENGTH = 6
CLIP_MARK = "…"
"""What `session.text.clip` appends where it cut a text: a secret value may end right before it."""

_CONTAINS = ("secret", "password", "passwd", "passphrase", "credential", "apikey", "privatekey", "accesskey")
_PARTS = frozenset({"auth", "authorization", "cookie", "cookies"})
_NOT_SECRET_ENV = frozenset({"PWD", "OLDPWD"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")


def is_secret_key(name: str) -> bool:
    """Whether a key or variable name holds a secret (see the module docstring for the list)."""
    parts = [p.lower() for p in _NON_ALNUM.split(_CAMEL.sub("_", name)) if p]
    if not parts:
        return False
    squashed = "".join(parts)
    if any(word in squashed for word in _CONTAINS):
        return True
    if any(part in _PARTS for part in parts):
        return True
    last = parts[-1]
    if last.endswith("token") or last in ("session", "sessionid", "sessid", "phpsessid"):
        return True
    if len(parts) >= 2 and parts[-2] == "session" and last in ("key", "secret", "cookie"):
        return True
    return parts == ["pwd"] and name != "PWD"


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
# A key starts a word, or follows an escaped newline or tab in a string literal (`'a=1\nTOKEN=x'`).
_PAIR = re.compile(
    r"(?:(?<![A-Za-z0-9_.-])|(?<=\\[nt]))(" + _KEY + r")(\s*(?::=|=|:(?!//))[ \t]*)"
    r"(\"(?:\\.|[^\"\\])*(?:\"|\\?\Z)|'(?:\\.|[^'\\])*(?:'|\\?\Z)|[^\s\"',;&<>{}\[\]()=|`]+)"
)
_FLAG = re.compile(r"(?<![\w-])(--?" + _KEY + r")([ \t]+|=)(\"[^\"]*(?:\"|\Z)|'[^']*(?:'|\Z)|[^\s\"'-][^\s\"']*)")
_BEARER = re.compile(r"\b(Bearer[ \t]+)([A-Za-z0-9._~+/=-]{8,})")
_NOT_DATA = frozenset({"none", "null", "nil", "true", "false", "undefined"})


def redact_text(text: str, secret_values: Iterable[str] = (), shapes: SecretShapes | None = None) -> str:
    """`text` with secrets replaced by `[REDACTED]`; never raises on any string. `shapes` defaults
    to detect-secrets' plugins read in this process (a hook passes the cached ones)."""
    text = _redact_values(text, secret_values)
    text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}:{REDACTED}@", text)
    text = _redact_headers(text)
    text = _sub_keyed(_QUOTED_PAIR, 2, text, _quoted_pair)
    text = _sub_keyed(_PAIR, 1, text, _pair)
    text = _sub_keyed(_FLAG, 1, text, _flag)
    text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    return (shapes or default_shapes()).redact(text)


# --- large outputs -------------------------------------------------------------------------------

WHOLE_TEXT_LIMIT = 64 * 1024
"""Up to this size `redact_output` is `redact_text`; beyond it, only lines that could hold a secret
are run through every rule (running them all over 8 MB of output costs ~6 s; finding the lines, ~0.4 s)."""
# A line can hold a secret only if it names one (these words, lower-cased), points at a URL's
# userinfo, runs a command whose flags carry passwords, or has a token-like run of 20 characters
# or more (every provider format detect-secrets knows is that long, except Artifactory's).
# `key` alone is no secret key name (is_secret_key), so JSON full of `"key":` takes the fast path.
_HINTS = ("secret", "passw", "passphrase", "credential", "apikey", "api_key", "api-key", "privatekey", "private_key",
          "private-key", "accesskey", "access_key", "access-key", "key is", "key was", "key for", "key of", "auth",
          "cookie", "token", "session", "pwd", "passcode", "bearer", "@", "mysql", "mariadb", "curl", "docker",
          "podman", "nerdctl", "login", "sshpass", "pin", "akc", "-u", "--user")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+=-]{20}")


def redact_output(text: str, secret_values: Iterable[str] = (), shapes: SecretShapes | None = None) -> str:
    """:func:`redact_text` for output of any size (what the agent's code printed, before indexing).

    Beyond WHOLE_TEXT_LIMIT the rules run line by line, on the lines with a hint of a secret
    (detect-secrets scans line by line too); PEM blocks, which span lines, and the given secret
    values are replaced in the whole text first.
    """
    shapes = shapes or default_shapes()
    if len(text) <= WHOLE_TEXT_LIMIT:
        return redact_text(text, secret_values, shapes)
    text = shapes.redact_pem(_redact_values(text, secret_values))
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


def _hinted_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of runs of lines holding a hint, merged; blocking, linear in the text."""
    low = text.lower()
    starts = [m.start() for m in _TOKEN_RUN.finditer(text)]
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


def _redact_values(text: str, secret_values: Iterable[str]) -> str:
    values = sorted({v for v in secret_values if len(v.strip()) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
    if not values:
        return text
    # One alternation, longest first, scanned left to right: no value survives in unreplaced text.
    text = re.sub("|".join(re.escape(v) for v in values), REDACTED, text)
    return _redact_clipped(text, values) if CLIP_MARK in text else text


def _redact_clipped(text: str, values: list[str]) -> str:
    """A value cut short by clipping survives as a prefix right before "…": redact a prefix of at
    least MIN_SECRET_LENGTH characters there (the longest one found)."""
    pieces = text.split(CLIP_MARK)
    for index, piece in enumerate(pieces[:-1]):
        cut = max((next((k for k in range(min(len(v) - 1, len(piece)), MIN_SECRET_LENGTH - 1, -1)
                         if piece.endswith(v[:k])), 0) for v in values), default=0)
        if cut:
            pieces[index] = piece[:-cut] + REDACTED
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
        out.append(value if value.strip() == REDACTED else REDACTED)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _quoted_pair(m: re.Match[str]) -> str | None:
    if not is_secret_key(m.group(2)):
        return None
    quote = m.group(4)
    return f"{m.group(1)}{m.group(2)}{m.group(1)}{m.group(3)}{quote}{REDACTED}{quote}"


def _pair(m: re.Match[str]) -> str | None:
    key, sep, value = m.group(1), m.group(2), m.group(3)
    if not is_secret_key(key):
        return None
    if _redacted_next(m.string, m.end()):
        return m.group(0)  # `Authorization: Bearer [REDACTED]` is done already
    if value[0] in "\"'":
        return f"{key}{sep}{value[0]}{REDACTED}{value[0]}"
    if _is_code(value, m.string, m.end()):
        return m.group(0)
    return f"{key}{sep}{REDACTED}"


def _redacted_next(text: str, end: int) -> bool:
    return text[end:end + len(REDACTED) + 4].lstrip(" \t").startswith(REDACTED)


def _flag(m: re.Match[str]) -> str | None:
    flag, gap, value = m.group(1), m.group(2), m.group(3)
    if not is_secret_key(flag.lstrip("-")):
        return None
    if REDACTED in value:
        return m.group(0)
    if value[0] in "\"'":
        return f"{flag}{gap}{value[0]}{REDACTED}{value[0]}"
    return f"{flag}{gap}{REDACTED}"


def _is_code(value: str, text: str, end: int) -> bool:
    """An unquoted value that reads as code or a reference, not as a secret itself."""
    if value[0] in "$%{<" or value.lower() in _NOT_DATA:
        return True
    following = text[end:end + 1]
    return following in ("(", "[")


# --- JSON values ---------------------------------------------------------------------------------


def redact_obj(obj: Any, secret_values: Iterable[str] = (), shapes: SecretShapes | None = None) -> Any:
    """A copy of a JSON-like value: values under secret keys become `[REDACTED]` (whatever they
    are, except None), every other string goes through :func:`redact_text`."""
    values = tuple(secret_values)
    return _redact_obj(obj, values, shapes or default_shapes())


def _redact_obj(obj: Any, values: tuple[str, ...], shapes: SecretShapes) -> Any:
    if isinstance(obj, str):
        return redact_text(obj, values, shapes)
    if isinstance(obj, Mapping):
        return {
            key: (REDACTED if isinstance(key, str) and is_secret_key(key) and value is not None
                  else _redact_obj(value, values, shapes))
            for key, value in obj.items()
        }
    if isinstance(obj, list):
        return [_redact_obj(item, values, shapes) for item in obj]
    if isinstance(obj, tuple):
        return tuple(_redact_obj(item, values, shapes) for item in obj)
    return obj


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
