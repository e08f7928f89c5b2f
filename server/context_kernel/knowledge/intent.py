"""Intent over one large output: the few lines worth reading, within a small reply.

Matching the intent's words alone failed both ways: a vague intent ("errors", "summary") returned
kilobytes of lines sharing one word, and a needle that does not repeat the intent's words (the
one 502 among 4,000 access-log lines, the request that took 48 s) was not returned at all. So
every line is scored by four signals, strongest first:

1. its match to the intent: the intent's stems it holds (camelCase parts and substrings count),
   each weighted by how rare it is among the lines, so a word on every line adds little;
2. the rarity of its template (templates.py: the line with numbers, ids, hex and quoted strings
   masked; a shape seen once in 3,000 lines is news, the 2,999 others are not);
3. severity cues (cues.py: log levels, failure words, HTTP 4xx/5xx, tracebacks);
4. numeric extremes: a number far above the others at the same place of the same template.

Lines are taken best first, at most a few per template (lines of a template this rare are all
kept), until the budget is spent, and shown in document order, numbered so the agent can ask for
more around them.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass

from .cues import KEEP_WORDS, severities
from .snippets import Matcher
from .tables import extreme_rows
from .templates import WILD, TemplateMiner
from .templates import tokens as line_tokens
from .terms import query_terms, stem, sub_words

MAX_LINE_CHARS = 400
PER_TEMPLATE = 3
# Lines holding two or more of the intent's words may show this many of their template.
PER_TEMPLATE_NAMED = 8
# A template this rare is shown whole (three failing tests among 900 passing are one shape).
SHOW_ALL_BELOW = 8
# Signal weights: the intent decides first, then rarity, severity and extremes break its ties.
W_INTENT, W_RARE, W_SEVERE, W_EXTREME = 3.0, 2.0, 2.0, 2.0
# A line with less than this is not worth a byte of the reply (a common line with no cue).
MIN_SCORE = 1.2
# A number counts as extreme at this many times its template's median at the same place.
EXTREME_RATIO = 4.0
_NUMBER = re.compile(r"^[^\d-]{0,24}?(-?\d+(?:\.\d+)?)([A-Za-z%µ]{0,3})[)\]}\"',;:]*$")
# Words naming the kind of answer, not its subject, and how much they weigh against a subject's word.
ANSWER_WORDS = ("time", "date", "when", "version", "number", "count", "value", "many", "much", "long", "size",
                "amount", "total", "name", "list", "show", "tell", "find", "configured", "set", "used", "use",
                "which", "who", "where", "most", "least", "recent", "latest", "first", "last")
ANSWER_WORD_WEIGHT = 0.3
# What the header and rows of a table's asked-for extreme weigh, as an extreme (knowledge/tables.py): above all.
ASKED_EXTREME = 5.0
# How deep enclosing lines lend their words to the lines they enclose.
MAX_NESTING = 12
_OPENER = re.compile(r"""^\s*(?:[-\w"'.$@/]+\s*[:=]\s*[{\[(]?|[{\[])\s*$""")
# Lines after a failure line that start indented are its details (a location, a DETAIL, a frame).
CONTINUATION_LINES = 2


@dataclass(frozen=True)
class IntentExcerpt:
    text: str
    matched_lines: int
    """Lines holding at least one of the intent's words."""
    shown_lines: int
    total_lines: int
    templates: int = 0
    """Distinct line shapes in the output."""


def intent_excerpt(output: str, intent: str, budget: int) -> IntentExcerpt:
    lines = output.splitlines()
    n = len(lines)
    if not n:
        return IntentExcerpt("", 0, 0, 0)
    miner = TemplateMiner(KEEP_WORDS)
    ids = [miner.add(line[:2000]) for line in lines]
    tids = [t for t, _ in ids]
    intent_score, terms_held = _intent_scores(lines, intent)
    extreme = _extremes(lines, tids, miner)
    # An intent asking for an extreme of a table ("the deepest quake"): its header and rows come first.
    for i in extreme_rows(lines, intent):
        extreme[i] = ASKED_EXTREME
    severity = severities(lines)
    scores = _line_scores(lines, ids, miner, intent_score, severity, extreme)
    # A line naming two of the intent's words (the subject and its event: `install postgresql-15`) may show more of
    # its shape than one sharing a single word with it (600 other installs, every `npm WARN`).
    keep = _pick_lines(lines, scores, tids, miner, severity, extreme, budget, [n >= 2 for n in terms_held])
    matched = sum(1 for s in intent_score if s > 0)
    return IntentExcerpt(_numbered(lines, keep, intent_score), matched, len(keep), n, len(miner.templates))


def _line_scores(lines: list[str], ids: list[tuple[int, int]], miner: TemplateMiner, intent_score: list[float],
                 severity: list[float], extreme: dict[int, float]) -> list[float]:
    """Per line, the four signals weighed into one score; a blank line scores 0."""
    n = len(lines)
    log_n = math.log(max(n, 2))
    cue = _cue_strengths(severity, n, log_n)
    scores: list[float] = []
    for i, line in enumerate(lines):
        if not line.strip():
            scores.append(0.0)
            continue
        tid, shape = ids[i]
        # The template says how unusual the line's kind is; its exact shape, half as much, what
        # merging hid (one "will be destroyed" among "will be created" lines).
        rarity = (math.log(n / miner.count[tid]) + 0.5 * math.log(n / miner.shape_count[shape])) / (1.5 * log_n)
        scores.append(W_INTENT * intent_score[i] + W_RARE * rarity + W_SEVERE * cue[i]
                      + W_EXTREME * extreme.get(i, 0.0))
    return scores


def _cue_strengths(severity: list[float], n: int, log_n: float) -> list[float]:
    """Per line, its severity weighed by how few lines reach that level.

    A cue on many lines (tests named "handles failed fetch", hundreds of retries) says less than
    one on two lines of 3,000: severity counts in full only when few lines reach its level.
    """
    at_least = {level: sum(1 for v in severity if v >= level) for level in set(severity)}
    cue_rarity = {level: 0.5 + 0.5 * math.log(n / max(1, k)) / log_n for level, k in at_least.items()}
    return [v * cue_rarity[v] for v in severity]


def _pick_lines(lines: list[str], scores: list[float], tids: list[int], miner: TemplateMiner,
                severity: list[float], extreme: dict[int, float], budget: int, named: list[bool]
                ) -> list[int]:
    """Indices of the lines to show, in document order: best first, a few per template (more of those that name
    what the intent asks: six `install postgresql-…` lines share one shape with 600 other installs), within the
    budget."""
    shown_per: dict[int, int] = {}
    keep: list[int] = []
    used = 0
    for i in sorted(range(len(lines)), key=lambda i: (-scores[i], i)):
        if scores[i] < MIN_SCORE and keep:
            break
        tid = tids[i]
        # Extremes are few by construction (the top values of a column): never capped.
        cap = PER_TEMPLATE_NAMED if named[i] else PER_TEMPLATE
        if shown_per.get(tid, 0) >= cap and miner.count[tid] > SHOW_ALL_BELOW and i not in extreme:
            continue
        cost = _cost(lines[i])
        if used + cost > budget:
            if keep:
                continue
            cost = budget  # a single line longer than the budget: shown cut
        keep.append(i)
        if i not in extreme:  # nor do they use up their template's share
            shown_per[tid] = shown_per.get(tid, 0) + 1
        used += cost
        if severity[i] >= 0.7:
            used = _keep_details(lines, i, keep, used, budget)
    return sorted(set(keep))


def _keep_details(lines: list[str], i: int, keep: list[int], used: int, budget: int) -> int:
    """Append to `keep` the indented lines right after failure line `i` (a location, a DETAIL, a
    frame), while the budget lasts; return the budget used then."""
    for j in range(i + 1, min(len(lines), i + 1 + CONTINUATION_LINES)):
        line = lines[j]
        cost = _cost(line)
        if not line[:1].isspace() or not line.strip() or j in keep or used + cost > budget:
            break
        keep.append(j)
        used += cost
    return used


def _cost(line: str) -> int:
    """What showing a line takes of the budget: its text up to the cut, and its number and mark."""
    return min(len(line), MAX_LINE_CHARS) + 12


def _numbered(lines: list[str], keep: list[int], intent_score: list[float]) -> str:
    """The kept lines numbered, `>` on those holding the intent's words, `…` where lines were skipped."""
    out: list[str] = []
    prev = -2
    for j in keep:
        if j != prev + 1 and out:
            out.append("…")
        mark = ">" if intent_score[j] > 0 else " "
        line = lines[j] if len(lines[j]) <= MAX_LINE_CHARS else lines[j][:MAX_LINE_CHARS] + " …"
        out.append(f"{mark}{j + 1:>6}: {line}")
        prev = j
    return "\n".join(out)


_ANSWER_STEMS = frozenset(stem(w) for w in ANSWER_WORDS)


class _StartMatcher(Matcher):
    """A search's matcher, but a word inside another counts only where that one starts a part of it: in a
    package log, `version` is not in `libdouble-conversion3` (a search may find `json` in `ujson`; an intent's
    line must name what it asks)."""

    def _key(self, word: str) -> str | None:
        low = word.lower()
        s = stem(low)
        if s in self.stems:
            return s
        for part in sub_words(word):
            if stem(part) in self.stems:
                return stem(part)
        for term in self._substrings:
            at = low.find(term)
            while at >= 0:
                if at == 0 or not low[at - 1].isalpha():
                    return stem(term)
                at = low.find(term, at + 1)
        return None


def _intent_scores(lines: list[str], intent: str) -> tuple[list[float], list[int]]:
    """Per line, 0..1: the share of the intent's (line-frequency weighted) words it holds; and how many distinct
    words of the intent it holds itself."""
    matcher = _StartMatcher(query_terms(intent))
    held = [{k for _, _, k in matcher.positions(line[:2000])} for line in lines]
    df: dict[str, int] = {}
    for keys in held:
        for k in keys:
            df[k] = df.get(k, 0) + 1
    n = len(lines)
    # A word on every line weighs almost nothing; one on a single line weighs log(n). Shares are of
    # what the present words could weigh at most, so a line holding only a common word scores low.
    # Words that say what kind of answer is wanted (`what version`, `at what time`, `how many`) weigh less than
    # those that name what it is about (`chromium`, `payments`): a line sharing only them is not the answer.
    weight = {k: math.log(1 + n / d) * (ANSWER_WORD_WEIGHT if k in _ANSWER_STEMS else 1.0) for k, d in df.items()}
    total = len(weight) * math.log(1 + n) or 1.0
    sums = [math.fsum(weight[k] for k in keys) for keys in _with_enclosing(lines, held)]
    # Relative to the best line as well: the line naming the intent's rarest words (the package asked about
    # and the event) ranks first even when the intent's other words are on no line or on hundreds.
    best = max(sums, default=0.0) or 1.0
    return [0.5 * s / total + 0.5 * s / best for s in sums], [len(keys) for keys in held]


def _extremes(lines: list[str], tids: list[int], miner: TemplateMiner) -> dict[int, float]:
    """Line → 0..1 for numbers far above the rest of their template at the same token position."""
    by_template: dict[int, list[int]] = {}
    for i, tid in enumerate(tids):
        if miner.count[tid] >= 20:
            by_template.setdefault(tid, []).append(i)
    found: dict[int, float] = {}
    for tid, members in by_template.items():
        slots = [p for p, token in enumerate(miner.templates[tid]) if token == WILD]
        if not slots:
            continue
        columns: dict[int, list[tuple[float, int]]] = {p: [] for p in slots}
        for i in members[:50000]:
            tokens = line_tokens(lines[i][:2000])
            for p in slots:
                if p < len(tokens):
                    m = _NUMBER.match(tokens[p])
                    if m:
                        columns[p].append((float(m.group(1)), i))
        for values in columns.values():
            if len(values) < 20:
                continue
            median = statistics.median(v for v, _ in values)
            if median <= 0:
                continue
            for value, i in sorted(values, reverse=True)[:3]:
                ratio = value / median
                if ratio >= EXTREME_RATIO:
                    found[i] = max(found.get(i, 0.0), min(1.0, math.log(ratio) / math.log(100)))
    return found



def _with_enclosing(lines: list[str], held: list[set[str]]) -> list[set[str]]:
    """Each line's words with those of the lines enclosing it by indentation (JSON, YAML, a traceback's frames):
    the `"timeout_ms": 4500` under `"payments": {` holds both words of "the payments service's timeout"."""
    out: list[set[str]] = []
    stack: list[tuple[int, set[str]]] = []  # (indent, the words of that line and its enclosing lines)
    for line, keys in zip(lines, held, strict=True):
        if not line.strip():
            out.append(keys)
            continue
        indent = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        inherited = keys | stack[-1][1] if stack else keys
        if len(stack) < MAX_NESTING:
            # Only an opener lends its words (`"payments": {`, `payments:`): a log line does not enclose the
            # indented lines after it in that sense.
            stack.append((indent, inherited if _OPENER.match(line) else (stack[-1][1] if stack else set())))
        out.append(inherited)
    return out
