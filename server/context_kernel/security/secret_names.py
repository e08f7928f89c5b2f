"""What a secret is called: which key names hold one, the kinds of secret, and the marker that
replaces a value (standard library only: the hooks import it on every tool call).

A redacted value becomes `[REDACTED <kind>]` (`[REDACTED github-token]`, `[REDACTED password]`):
whoever reads a stored text learns what was there, never any part of it. The kinds are the
`SecretKind` literal below; docs/security.md lists them and a test keeps the two in step.

Key names (case-insensitive, also inside longer names such as `GITHUB_TOKEN`, `db_password`,
`x-api-key`, `clientSecret`): `secret`, `password`, `passwd`, `passphrase`, `credential(s)`,
`api_key`/`apikey`/`api-key`, `private_key`, `access_key`, `authorization`, `auth`,
`cookie`/`set-cookie`; `token` and `session` only as the last part of a name (`auth_token`,
`user_session`, Django's `sessionid`), `pwd`, `pw` and `pass` as the last part of a longer name
(`MYSQL_PWD`, `SMTP_PASS`), and `pwd` alone. Not secret: `max_tokens`,
`tokens`, `token_count`, `tokenizer` (counts and tools of the LLM trade), `session_id` (hook
payloads name the session with it), the environment variables `PWD` and `OLDPWD` (directories), and a
name about how a secret is made or kept rather than holding one (`password_hash_algo`, `token_expiry`,
`password_policy`: _ABOUT_PARTS).
"""

from __future__ import annotations

import re
from typing import Literal, get_args

SecretKind = Literal[
    # provider tokens, by the shape of the value
    "aws-access-key-id", "aws-secret", "aws-session-token", "github-token", "gitlab-token", "npm-token",
    "pypi-token", "slack-token", "slack-webhook", "stripe-key", "stripe-webhook-secret", "openai-key",
    "anthropic-key", "google-api-key", "azure-storage-key", "jwt", "private-key",
    # detect-secrets' other provider formats
    "artifactory-token", "cloudant-key", "discord-token", "ibm-cloud-key", "mailchimp-key", "sendgrid-key",
    "softlayer-key", "square-secret", "telegram-token", "twilio-key",
    # credentials in addresses and commands
    "url-password", "url-token", "url-credential", "password",
    # values named by their key or header
    "authorization", "bearer-token", "cookie", "token", "secret", "api-key", "access-key", "credential",
    "session", "key",
]
"""Every kind a marker may name."""

KINDS: tuple[str, ...] = get_args(SecretKind)
MARKER_WORD = "[REDACTED"
MARKER = re.compile(r"\[REDACTED(?: ([a-z0-9-]+))?\]")
"""A marker in text (the bare `[REDACTED]` of older versions included), its kind as group 1."""


def marker(kind: SecretKind) -> str:
    return f"[REDACTED {kind}]"


def marked_kind(text: str) -> SecretKind | None:
    """The kind of the first marker in `text`, if it holds one."""
    m = MARKER.search(text)
    kind = m.group(1) if m else None
    return kind if kind in KINDS else None  # type: ignore[return-value]  # checked against the literal's values


def is_marker(text: str) -> bool:
    """`text` is one marker and nothing else (already redacted: leave it as it is)."""
    return MARKER.fullmatch(text.strip()) is not None


# --- key names -----------------------------------------------------------------------------------

_CONTAINS = ("secret", "password", "passwd", "passphrase", "credential", "apikey", "privatekey", "accesskey")
_PARTS = frozenset({"auth", "authorization", "cookie", "cookies"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")


def name_parts(name: str) -> list[str]:
    """`clientSecret`, `client-secret`, `CLIENT_SECRET` → ["client", "secret"]."""
    return [p.lower() for p in _NON_ALNUM.split(_CAMEL.sub("_", name)) if p]


def is_secret_key(name: str) -> bool:
    """Whether a key or variable name holds a secret (see the module docstring for the list)."""
    parts = name_parts(name)
    if not parts or any(p in _ABOUT_PARTS for p in parts):
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
    if len(parts) >= 2 and last in ("pwd", "pw", "pass"):  # MYSQL_PWD, SMTP_PASS
        return True
    return parts == ["pwd"] and name != "PWD"


# Words that make a name hold a secret when its value looks random (`signing_key`, `STRIPE_KEY`,
# `encryptionKey`): as a whole part of the name, or one of these run-together compounds.
_KEYED_PARTS = frozenset({"key", "secret", "secrets", "token", "password", "passwd", "pwd", "passphrase",
                          "credential", "credentials", "pass"})
_KEYED_COMPOUNDS = frozenset({"apikey", "secretkey", "accesskey", "privatekey", "signingkey", "masterkey",
                              "authtoken", "accesstoken", "refreshtoken", "apitoken", "clientsecret", "authkey"})
# A name about a secret that is no secret itself: its id, type, size or where it lives; public keys.
_NOT_SECRET_PARTS = frozenset({"public", "publishable", "pub", "id", "ids", "type", "name", "names", "count", "len",
                               "length", "size", "path", "file", "dir", "url", "uri", "format", "prefix", "index",
                               "field", "column", "version", "tokens", "max", "min"})
# How a secret is made or kept, not the secret: `password_hash_algo=plain:sha256:pbkdf2+sha256` in WeeChat's
# relay protocol, `password_hash_iterations: 100000`, `password_policy`, `token_expiry`.
_ABOUT_PARTS = frozenset({"algo", "algorithm", "algorithms", "iterations", "rounds", "policy", "expiry", "expires",
                          "lifetime", "ttl", "age", "strength", "prompt", "mode", "required", "enabled", "min", "max",
                          "length", "len", "size", "count"})


def names_a_secret(name: str) -> bool:
    """A name under which a random-looking value is a secret: `is_secret_key`, or a name with a part
    `key`, `secret`, `token`, `password`… that is not about the secret (`key_id`, `public_key`)."""
    parts = name_parts(name)
    if not parts or any(p in _NOT_SECRET_PARTS for p in parts):
        return False
    return is_secret_key(name) or any(p in _KEYED_PARTS or p in _KEYED_COMPOUNDS for p in parts)


def kind_of_key(name: str) -> SecretKind:
    """What a value under the key `name` is called in its marker."""
    squashed = "".join(name_parts(name))
    for words, kind in _KEY_KINDS:
        if any(w in squashed for w in words):
            return kind
    return "secret"


_KEY_KINDS: tuple[tuple[tuple[str, ...], SecretKind], ...] = (
    (("password", "passwd", "passphrase", "passcode", "pwd", "pass"), "password"),
    (("privatekey",), "private-key"),
    (("apikey",), "api-key"),
    (("accesskey",), "access-key"),
    (("secret",), "secret"),
    (("credential",), "credential"),
    (("cookie",), "cookie"),
    (("token",), "token"),
    (("session", "sessid"), "session"),
    (("authorization", "auth"), "authorization"),
    (("key",), "key"),
)
