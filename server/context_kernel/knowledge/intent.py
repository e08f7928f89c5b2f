"""Intent search over one large output: the lines that match what the agent is looking for.

The reference returns section titles and first lines, and missed a lone `ERROR disk full` line
in a 3,000-line log. We score every line by how many of the intent's words it holds (stems,
camelCase parts and substrings count), keep the best-scoring lines with one line of context,
and number them so the agent can ask for more around them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .snippets import Matcher
from .terms import query_terms

CONTEXT_LINES = 1
MAX_LINE_CHARS = 400


@dataclass(frozen=True)
class IntentExcerpt:
    text: str
    matched_lines: int
    shown_lines: int
    total_lines: int


def intent_excerpt(output: str, intent: str, budget: int) -> IntentExcerpt:
    lines = output.splitlines()
    matcher = Matcher(query_terms(intent))
    scores = [len({k for _, _, k in matcher.positions(line[:2000])}) for line in lines]
    best = max(scores, default=0)
    if best == 0:
        return IntentExcerpt("", 0, 0, len(lines))
    # The best-scoring lines; with one-word intents that is every line holding the word.
    chosen = [i for i, s in enumerate(scores) if s == best]
    if best > 1:
        # Near misses (one intent word short) too, but only when they are rare: an error line may
        # not repeat every word, while a word on every line ("test" in a test log) is just noise.
        near = [i for i, s in enumerate(scores) if s == best - 1]
        if len(near) <= max(5, len(lines) // 50):
            chosen += near
    picked = set(chosen)
    keep: list[int] = []
    used = 0
    for i in sorted(set(chosen), key=lambda i: (-scores[i], i)):
        window = [j for j in range(max(0, i - CONTEXT_LINES), min(len(lines), i + CONTEXT_LINES + 1))]
        cost = sum(min(len(lines[j]), MAX_LINE_CHARS) + 12 for j in window if j not in keep)
        if used + cost > budget and keep:
            break
        keep.extend(j for j in window if j not in keep)
        used += cost
    keep.sort()
    out: list[str] = []
    prev = -2
    for j in keep:
        if j != prev + 1 and out:
            out.append("…")
        mark = ">" if j in picked else " "
        line = lines[j] if len(lines[j]) <= MAX_LINE_CHARS else lines[j][:MAX_LINE_CHARS] + " …"
        out.append(f"{mark}{j + 1:>6}: {line}")
        prev = j
    shown = sum(1 for j in keep if j in picked)
    return IntentExcerpt("\n".join(out), len(chosen), shown, len(lines))
