"""Generic signs that a line of output reports trouble: log levels, failure words, HTTP 4xx/5xx,
tracebacks. Deliberately general (any log, test run, build or table), not fitted to known cases.

Regular expressions rather than stemming every word: this runs on every line of outputs of a
hundred thousand lines, and almost no line holds a cue.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator

# Log levels, as words in any case (`ERROR`, `level=error`, `[Warn]`).
LEVELS = {"fatal": 1.0, "critical": 1.0, "crit": 1.0, "panic": 1.0, "emerg": 1.0, "alert": 0.8, "severe": 1.0,
          "error": 1.0, "err": 0.8, "warning": 0.6, "warn": 0.6}
# Beginnings of words that say something went wrong (`fail` covers failed, failure, failing).
FAILURE_WORDS = (
    "fail", "error", "exception", "traceback", "crash", "abort", "denied", "refus", "forbidden", "unauthori",
    "timeout", "timed out", "time out", "kill", "oom", "segfault", "segmentation fault", "unreachable", "invalid",
    "mismatch", "corrupt", "unable", "cannot", "can't", "couldn't", "missing", "undeclared", "undefined",
    "unexpected", "lost", "exceed", "backoff", "back-off", "reject", "broken", "violat", "overflow", "deadlock",
    "leak", "unhandled", "errno", "fault", "stacktrace", "stack trace", "assert", "terminat", "degraded",
    "unavailable", "expired", "not found", "no such", "giving up", "gave up", "panick",
)
# The same inside a camelCase identifier (`OOMKilled`, `KeyError`, `ConnectionRefused`).
CAMEL_FAILURES = ("Error", "Exception", "Fail", "Killed", "Fault", "Timeout", "Refused", "Denied", "Exceeded",
                  "Panic")
# Words the template miner must never turn into a parameter.
KEEP_WORDS = frozenset(LEVELS) | frozenset(["passed", "failed", "ok", "skipped", "error", "errors"])
_TRACE = re.compile(r"^[ \t]*(Traceback \(most recent call last\)|at [\w$.<>]+\(.*\)$|panic: |goroutine \d+ \[|"
                    r"[\w.]*(Error|Exception)\b:)", re.MULTILINE)
# An HTTP status where logs put one: after the quoted request line (common log format), after a
# response's protocol, or as a status/code field. A bare 5xx-looking number is often a size.
_STATUS = re.compile(r"(?:\"\s|http/[\d.]+\"?\s+|\b(?:status|code|status_code)\b[\"']?\s*[=:]?\s*[\"']?)"
                     r"([45])\d\d\b")


def severities(lines: list[str]) -> list[float]:
    """Per line, 0 (nothing wrong said) to 1 (an error, a traceback, a 5xx).

    Each pattern scans the whole text once (line by line was 10 µs a line, most of an intent's time).
    """
    text = "\n".join(lines)
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    found = [0.0] * len(lines)

    def mark(pos: int, value: float) -> None:
        i = bisect.bisect_right(starts, pos) - 1
        if value > found[i]:
            found[i] = value

    # str.find per word, not one regular expression: an alternation of fifty words is tried at every
    # position of the text (2 s on 8 MB), a substring search runs at memchr speed.
    lower = text.lower()
    for word in LEVELS:
        for pos in _occurrences(lower, word):
            end = pos + len(word)
            if end >= len(lower) or not lower[end].isalpha():
                mark(pos, LEVELS[word])
    for word in FAILURE_WORDS:
        for pos in _occurrences(lower, word):
            mark(pos, 0.7)
    for word in CAMEL_FAILURES:
        for pos in _occurrences(text, word, camel=True):
            mark(pos, 0.7)
    for m in _STATUS.finditer(lower):
        mark(m.start(), 0.8 if m.group(1) == "5" else 0.4)
    for m in _TRACE.finditer(text):
        mark(m.start(), 1.0)
    return found


def _occurrences(text: str, word: str, camel: bool = False) -> Iterator[int]:
    """Where `word` starts a word of `text` (after a non-letter; for `camel`, after a letter)."""
    pos = text.find(word)
    while pos != -1:
        before = text[pos - 1] if pos else " "
        if before.isalpha() == camel:
            yield pos
        pos = text.find(word, pos + 1)
