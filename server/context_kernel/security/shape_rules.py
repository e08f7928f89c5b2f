"""Our own secret shapes: the formats detect-secrets lacks or gets wrong, each with the kind its
marker names (standard library only). `secret_shapes.py` runs them with detect-secrets' patterns.

Why each exists where detect-secrets has a rule of its own: its GitHub rule wants exactly 36
characters (a token cut short by clipping stayed whole), its Stripe rule exactly 24 (a longer key
kept its tail), its JWT rule stops before the signature, its npm rule wants an `.npmrc` line and
its Slack rule lower-case letters only. Ours take any length from a floor, and a token's tail
must look random (digits or capitals) so that identifiers like `ghs_install_handler` stay.

A token's start is guarded so that it is not read inside base64 (image data is full of `AIza`-like
runs): a token starts after a character that cannot be part of it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .secret_names import MARKER_WORD, SecretKind, is_secret_key, kind_of_key, names_a_secret

Found = tuple[int, int, SecretKind]
"""(start, end, kind) of one secret value in a text."""


@dataclass(frozen=True)
class Rule:
    """`pattern`, whose group `group` is the secret when `accept` (given the match) agrees."""

    kind: SecretKind | Callable[[re.Match[str]], SecretKind]
    pattern: re.Pattern[str]
    group: int = 0
    accept: Callable[[re.Match[str]], bool] | None = None
    trim: str = ""
    """characters cut off the value's ends besides quotes and separators (prose: its punctuation)"""
    needles: tuple[str, ...] = ()
    """Lower-case strings one of which every match holds: without any, the pattern is not run
    (most texts hold no `mysql`, no `ghp_`, no `eyJ`; scanning for them is 10-50× cheaper)."""

    def find(self, text: str, low: str | None = None) -> Iterator[Found]:
        """The secrets `pattern` finds in `text`; `low` is `text.lower()` when the caller has it."""
        if self.needles:
            low = text.lower() if low is None else low
            if not any(n in low for n in self.needles):
                return
        for m in self.pattern.finditer(text):
            value = m.group(self.group)
            if value and MARKER_WORD not in value and (self.accept is None or self.accept(m)):
                kind = self.kind if isinstance(self.kind, str) else self.kind(m)
                yield from trimmed(text, m.start(self.group), m.end(self.group), kind, self.trim)


# A plugin's match may include the character before or after the value (Artifactory's
# `(?:\s|=|:|"|^)AKC…(?:\s|"|$)`); that character is not part of the secret.
EDGE = " \t\r\n=:\"'(),"


def trimmed(text: str, start: int, end: int, kind: SecretKind, extra: str = "") -> Iterator[Found]:
    strip = EDGE + extra
    while start < end and text[start] in strip:
        start += 1
    while end > start and text[end - 1] in strip:
        end -= 1
    if end > start:
        yield start, end, kind


# --- what a value must look like ----------------------------------------------------------------


def mixed(value: str) -> bool:
    """Letters and digits both: what random tokens have and words (`sk-learn-classifier`) lack."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _random_tail(prefix_len: int) -> Callable[[re.Match[str]], bool]:
    """The part after a provider prefix has a digit or a capital: `ghs_install_handler` is a name."""
    return lambda m: any(c.isdigit() or c.isupper() for c in m.group(0)[prefix_len:])


def random_looking(value: str) -> bool:
    """A value a person did not type as a word: 16+ characters, letters and digits, and at least
    3 bits of Shannon entropy per character (a random base62 token has ~4; `build2024build2024` 2.5)."""
    if len(value) < 16 or not mixed(value):
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= 3.0


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
    "authentication", "auth", "login", "protection", "manager", "prompt", "change", "field",
    "lost", "forgotten", "encoded", "evaluated", "ignored", "checked", "compared", "specified",
})
_PROSE_PUNCT = ".,;:!?)\"'`"


def _prose_password(value: str) -> bool:
    """Anything but a common word (`the password is never printed`) or a reference (`$PW`, `f()`)."""
    core = value.strip(_PROSE_PUNCT)
    return core != "" and core.lower() not in _PROSE_NOT_VALUES and core[0] not in "$%{<[" and "(" not in core


# A word after the value that starts a new clause: the value ended its own (`the password is swordfish
# and the user is bob`).
_CLAUSE_JOINERS = frozenset({"and", "or", "but", "so", "then", "when", "while", "if", "because", "until"})
# The next word, on the same line or the next one (manuals wrap their sentences).
_NEXT_WORD = re.compile(r"(?:[ \t]+|[ \t]*\n[ \t]*)([^\W_][\w-]*)")
# What a word looks like: letters only, a capital first at most. A value with a digit, an inner capital or
# a symbol (`hunter2`, `s3cret`, `xKq-9`) is not one, wherever it stands.
_WORD_SHAPE = re.compile(r"[A-Za-z][a-z]*")


def _prose_password_said(m: re.Match[str]) -> bool:
    """A prose password's value is the end of its clause. A word or a small number that the sentence
    goes on after is prose, not a secret: manuals write "the hashed password is one of the following",
    "the password to use for the relay", "the username/password to authenticate with the proxy", "the
    PIN is 4 digits". A value in quotes, one shaped unlike a word (`hunter2`), or one that ends its clause
    (`the password is swordfish.`, `… is swordfish and …`) is redacted. The cost: a plain word given as
    a password mid-sentence (`the password is swordfish for the admin page`) is read as prose."""
    value = m.group(1)
    if not _prose_password(value):
        return False
    quoted = m.start(1) > 0 and m.string[m.start(1) - 1] in "'\"`"
    if quoted or value.strip(_PROSE_PUNCT) != value:
        return True
    if not (_WORD_SHAPE.fullmatch(value) or (value.isdigit() and len(value) <= 3)):
        return True
    after = _NEXT_WORD.match(m.string, m.end(1))
    return after is None or after[1].lower() in _CLAUSE_JOINERS


def _prose_token(value: str) -> bool:
    """`the token is expired` is no token: a token said in prose is long and mixes letters and digits."""
    core = value.strip(_PROSE_PUNCT)
    return len(core) >= 8 and mixed(core) and _prose_password(core)


def _group1(check: Callable[[str], bool]) -> Callable[[re.Match[str]], bool]:
    return lambda m: check(m.group(1))


AWS_KEY_ID_NEEDLES = ("a3t", "abia", "acca", "akia", "asia")


# --- the rules, most specific first (an overlap is named by the earlier rule) --------------------

# A token starts a word: not after a character it could be part of. `_B64` also keeps base64's
# `+` and `/` out, for the prefixes that base64 text can spell (`AIza`, `AKIA`, `eyJ`).
_W = r"(?<![A-Za-z0-9_-])"
_B64 = r"(?<![A-Za-z0-9+/_-])"
# A command starts a word, or follows an escaped newline or tab inside a string literal (code that
# holds `'…\nmysql -pX'` is as common as the command itself).
_CMD = r"(?:(?<![\w-])|(?<=\\[nt]))"
# Between a key and its value: `=`, `:`, `:=`, `=>` with spaces around, or plain spaces (a command's
# arguments: `aws configure set aws_secret_access_key X`); a JSON key's closing quote before it.
_SEP = r"[\"']?(?:[ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+)[\"'`]?"

PROVIDER_RULES: tuple[Rule, ...] = (
    Rule("anthropic-key", re.compile(_W + r"sk-ant-[A-Za-z0-9_-]{16,}"), accept=lambda m: mixed(m.group(0)[7:]),
         needles=("sk-ant-",)),
    Rule("openai-key", re.compile(_W + r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
         accept=lambda m: mixed(m.group(0)[3:]), needles=("sk-",)),
    Rule("stripe-key", re.compile(_W + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"), accept=_random_tail(8),
         needles=("k_live_", "k_test_")),
    Rule("stripe-webhook-secret", re.compile(_W + r"whsec_[A-Za-z0-9+/=]{16,}"), accept=_random_tail(6),
         needles=("whsec_",)),
    Rule("github-token", re.compile(_W + r"gh[pousr]_[A-Za-z0-9_]{16,}"), accept=_random_tail(4),
         needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    Rule("github-token", re.compile(_W + r"github_pat_[A-Za-z0-9_]{16,}"), accept=_random_tail(11),
         needles=("github_pat_",)),
    Rule("gitlab-token", re.compile(_W + r"(?:glpat|gldt|glft|glsoat|glrt|glptt|glcbt|glimt|gloas|glagent)-"
                                         r"[A-Za-z0-9_-]{16,}"), accept=lambda m: mixed(m.group(0).split("-", 1)[1]),
         needles=("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glptt-", "glcbt-", "glimt-", "gloas-", "glagent-")),
    Rule("npm-token", re.compile(_W + r"npm_[A-Za-z0-9]{20,}"), accept=_random_tail(4), needles=("npm_",)),
    Rule("pypi-token", re.compile(_W + r"pypi-AgE[A-Za-z0-9_-]{20,}"), needles=("pypi-age",)),
    # The path is the credential; the host stays readable.
    Rule("slack-webhook", re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{8,})"),
         group=1, needles=("hooks.slack.com/",)),
    Rule("slack-token", re.compile(_W + r"(?:xox[abeposr]|xapp)-[A-Za-z0-9-]{10,}"), accept=_random_tail(5),
         needles=("xox", "xapp-")),
    Rule("google-api-key", re.compile(_B64 + r"AIza[0-9A-Za-z_-]{30,}"), needles=("aiza",)),
    Rule("aws-access-key-id", re.compile(r"(?<![A-Za-z0-9+/])(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"
                                         r"(?![0-9A-Z])"), needles=AWS_KEY_ID_NEEDLES),
    # AWS CLI output (`"SecretAccessKey": …`), its config and `aws configure set aws_secret_access_key X`.
    Rule("aws-secret", re.compile(r"(?i)(?:aws[ _-]?)?secret[ _-]?(?:access[ _-]?)?key" + _SEP +
                                  r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"), group=1, needles=("secret",)),
    Rule("aws-session-token", re.compile(r"(?i)(?:aws[ _-]?)?session[ _-]?token" + _SEP + r"([A-Za-z0-9/+=]{16,})"),
         group=1, accept=_group1(mixed), needles=("session",)),
    Rule("azure-storage-key", re.compile(r"(?i)(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{16,}={0,2})"), group=1,
         needles=("accountkey=", "sharedaccesskey=")),
    # All three parts; the signature may be empty (`alg: none`).
    Rule("jwt", re.compile(_B64 + r"eyJ[A-Za-z0-9_-]{8,}\.ey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"), needles=("eyj",)),
)

_QUERY_NAMES = frozenset({
    "key", "token", "access_token", "refresh_token", "id_token", "auth", "sig", "signature", "x-amz-signature",
    "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential", "private_token",
    "client_secret", "code_verifier", "jwt", "apikey", "api_key", "api-key", "pass", "pwd",
})


def _query_credential(m: re.Match[str]) -> bool:
    name = m.group(1).lower()
    if name == "key":
        return len(m.group(2)) >= 8  # `?key=value` in documentation; API keys are long
    return name in _QUERY_NAMES or is_secret_key(name)


ADDRESS_RULES: tuple[Rule, ...] = (
    # A token alone as URL userinfo (`https://<token>@github.com/…`); user names (`git@`, `bob@`)
    # are short or wordy, a token is long and mixes letters with digits.
    Rule("url-token", re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://([^\s:/@\[\]]{16,})@"), group=1,
         accept=_group1(mixed), needles=("://",)),
    # Query-string credentials: `?api_key=…`, `&access_token=…`, a signed URL's `X-Amz-Signature=…`.
    Rule("url-credential", re.compile(r"(?<=[?&;])([A-Za-z0-9_.-]{1,64})=([^&#\s'\"<>\[\]]+)"), group=2,
         accept=_query_credential, needles=("=",)),
)

COMMAND_RULES: tuple[Rule, ...] = (
    Rule("password", re.compile(_CMD + r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b"
                                r"[^\n|;&]*?(?<!\S)-p([^\s'\"]+|'[^']*'|\"[^\"]*\")"), group=1,
         needles=("mysql", "mariadb")),
    # `-u 1000:1000` (docker run, chown-like tools) is a uid:gid, not a user and a password.
    Rule("password", re.compile(r"(?<!\S)(?:-u|--user|--proxy-user)(?:[ \t]+|=)?(?!\d+:\d+(?!\S))['\"]?[^\s:'\"]*:"
                                r"([^\s'\"]+)"), group=1, needles=("-u",)),
    Rule("password", re.compile(_CMD + r"(?:docker|podman|nerdctl|buildah|skopeo|helm|oras)\b[^\n|;&]*?\blogin\b"
                                r"[^\n|;&]*?(?<!\S)-p(?:[ \t]+|=)?['\"]?([^\s'\"]+)"), group=1, needles=("login",)),
    Rule("password", re.compile(_CMD + r"sshpass\b[^\n|;&]*?(?<!\S)-p[ \t]*['\"]?([^\s'\"]+)"), group=1,
         needles=("sshpass",)),
    Rule("password", re.compile(_CMD + r"(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b"
                                r"[^\n|;&]*?(?<!\S)-p[ \t]+['\"]?([^\s'\"-][^\s'\"]*)"), group=1, needles=("mongo",)),
    Rule("password", re.compile(_CMD + r"redis-cli\b[^\n|;&]*?(?<!\S)-a[ \t]+['\"]?([^\s'\"]+)"), group=1,
         needles=("redis-cli",)),
    Rule("password", re.compile(_CMD + r"(?:7z|7za|7zz)\b[^\n|;&]*?(?<!\S)-p([^\s'\"]+)"), group=1, needles=("7z",)),
    Rule("password", re.compile(_CMD + r"(?:zip|unzip|sqlcmd)\b[^\n|;&]*?(?<!\S)-P[ \t]+['\"]?([^\s'\"]+)"), group=1,
         needles=("zip", "sqlcmd")),
    Rule("password", re.compile(r"(?<!\S)-pass(?:in|out)?[ \t]+['\"]?pass:([^\s'\"]+)"), group=1, needles=("pass:",)),
)

PROSE_RULES: tuple[Rule, ...] = (
    Rule("password", re.compile(r"(?i)\b(?:password|passwd|passphrase|passcode|pwd|pin)\b(?:\s+(?:for|of)\s+\S+)?"
                                r"\s+(?:is|was|to)\s+['\"`]?([^\s'\"`]+)"), group=1,
         accept=_prose_password_said, trim=_PROSE_PUNCT, needles=("pass", "pwd", "pin")),
    # "connect with password hunter2pass", "log in using the password X"
    Rule("password", re.compile(r"(?i)\b(?:with|using|use|via)\s+(?:the\s+|a\s+|my\s+|our\s+|this\s+)?"
                                r"(?:password|passwd|passphrase|passcode)\s*[:=]?\s*['\"`]?([^\s'\"`]+)"), group=1,
         accept=_prose_password_said, trim=_PROSE_PUNCT, needles=("pass",)),
    Rule("token", re.compile(r"(?i)\b(?:token|secret|api[ _-]?key|access[ _-]?key|key)\b(?:\s+(?:for|of)\s+\S+)?"
                             r"\s+(?:is|was)\s+['\"`]?([^\s'\"`]+)"), group=1, accept=_group1(_prose_token),
         trim=_PROSE_PUNCT, needles=("token", "secret", "key")),
)

# A provider token cut short by clipping ("…" appended where text was cut): its prefix and the
# few characters left are still the start of a secret.
_CLIPPED_PREFIXES: tuple[tuple[str, SecretKind], ...] = (
    ("sk-ant-", "anthropic-key"), ("sk-", "openai-key"), ("sk_live_", "stripe-key"), ("rk_live_", "stripe-key"),
    ("sk_test_", "stripe-key"), ("rk_test_", "stripe-key"), ("ghp_", "github-token"), ("gho_", "github-token"),
    ("ghu_", "github-token"), ("ghs_", "github-token"), ("ghr_", "github-token"), ("github_pat_", "github-token"),
    ("glpat-", "gitlab-token"), ("npm_", "npm-token"), ("pypi-", "pypi-token"), ("xoxb-", "slack-token"),
    ("xoxp-", "slack-token"), ("xoxa-", "slack-token"), ("xoxe-", "slack-token"), ("AIza", "google-api-key"),
    ("eyJ", "jwt"),
)
_CLIPPED = re.compile(_W + "(" + "|".join(re.escape(p) for p, _ in _CLIPPED_PREFIXES) + r")[A-Za-z0-9_.-]{4,}(?=…)")
CLIPPED_RULE = Rule(lambda m: dict(_CLIPPED_PREFIXES)[m.group(1)], _CLIPPED, needles=("…",))


# --- a random-looking value under a name that holds secrets --------------------------------------

_KEYWORD = re.compile(r"(?i)key|secret|token|passw|pwd|passphrase|credential|pass\b")
_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_VALUE_AFTER = re.compile(_SEP + r"([A-Za-z0-9+/=_~.-]{16,})")
_MAX_NAME = 64


def keyed_values(text: str) -> Iterator[Found]:
    """`signing_key = "…"`, `--api-token Xy…`, `"clientSecret": "…"`: a value that looks random
    under a name with `key`, `secret`, `token`, `password`… in it. The names are found from their
    keyword (a scan for a few words is fast), then read outwards, so no regex backtracks over long
    runs of letters (base64 is full of them)."""
    done = 0
    for hit in _KEYWORD.finditer(text):
        if hit.start() < done:
            continue
        start, end = hit.start(), hit.end()
        while start > 0 and text[start - 1] in _NAME:
            start -= 1
        while end < len(text) and text[end] in _NAME:
            end += 1
        done = end
        if end - start > _MAX_NAME or (start > 0 and text[start - 1] in "+/"):
            continue  # inside base64 or a long identifier run, not a name
        name = text[start:end].strip("-.")
        m = _VALUE_AFTER.match(text, end)
        if m is None or not names_a_secret(name):
            continue
        value = m.group(1).rstrip(".")
        if random_looking(value):
            yield m.start(1), m.start(1) + len(value), kind_of_key(name)


OWN_RULES: tuple[Rule, ...] = (*PROVIDER_RULES, *ADDRESS_RULES, *COMMAND_RULES, *PROSE_RULES, CLIPPED_RULE)
