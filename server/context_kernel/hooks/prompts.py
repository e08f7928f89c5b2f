"""User prompts → the intent, plus the decisions and corrections they state.

Sentence-level regular expressions, no model: the hook must answer in milliseconds. Questions never
count; a prompt that corrects the agent anywhere is a correction, one that only sets a choice is a
decision.
"""

from __future__ import annotations

import re

from .model import Event
from .text import SCAN_CHARS, clip, one_line

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_LEAD_IN = re.compile(r"^(?:(?:ok(?:ay)?|so|and|also|but|please|then|yes|yeah|great|thanks|from now on|"
                      r"going forward|in (?:the )?future|for this project|for now)\b[,:;!.]?\s*)+", re.IGNORECASE)
# Imperatives that set a standing rule when they open a sentence ("Never commit to main."; "Never mind"
# takes something back, it sets nothing).
_DECISION_START = re.compile(r"^(?:don'?t|do not|never(?!\s+mind\b)|always|prefer|avoid|make sure to|must|no need to|"
                             r"only use|keep using|stick (?:with|to)|switch to|go with)\b", re.IGNORECASE)
_DECISION_ANY = re.compile(
    r"\blet'?s (?:not\b|use|go with|switch to|stick (?:with|to)|keep|adopt|drop|move to|call it|name it)\b"
    r"|\blet us (?:use|go with)\b"
    r"|\bwe(?:'ll| will| should| are going to|'re going to|'re| are) (?:use|using|go with|going with|"
    r"stick(?:ing)? (?:with|to)|switch(?:ing)? to|keep|drop)\b"
    r"|\b(?:i|we)(?:'ve| have)? decided\b|\bdecided to\b|\bdecision(?: is)?:"
    r"|\buse \S+(?: \S+)? (?:instead of|rather than|over)\b"
    r"|\b(?:i|we)(?:'d)? prefer\b|\bfrom now on\b|\bgoing forward\b", re.IGNORECASE)
_CORRECTION_OPENING = re.compile(r"^(?:no|nope|nah|wrong)\b", re.IGNORECASE)
_NOT_CORRECTION = re.compile(r"^no,? (?:problem|worries|rush|need|thanks?)\b", re.IGNORECASE)
_CORRECTION_ANY = re.compile(
    r"^actually\b|^not quite\b|\bactually,|\bthat'?s (?:wrong|incorrect|not (?:right|what|it|correct))\b"
    r"|\bthat is (?:wrong|incorrect|not right)\b|\bnot what i (?:asked|meant|said|wanted)\b"
    r"|\bstop (?:doing|using|adding|changing|that)\b|\byou (?:broke|missed|forgot|ignored)\b"
    r"|\bi (?:said|told you)\b|\b(?:undo|revert) (?:that|this|it)\b|\bdon'?t do that\b", re.IGNORECASE)
_WEAK_CORRECTION = re.compile(r"\binstead\b", re.IGNORECASE)


def prompt_events(prompt: str) -> list[Event]:
    """The prompt itself (intent) and, when it sets a choice or corrects the agent, a decision."""
    text = one_line(prompt)
    if not text:
        return []
    events = [Event("prompt", "intent", clip(text, 300))]
    kind, sentences = classify_prompt(prompt)
    if kind:
        events.append(Event(kind, "decisions", clip(" … ".join(sentences), 300)))
    return events


def classify_prompt(prompt: str) -> tuple[str | None, list[str]]:
    """("correction" | "decision" | None, the sentences that say so). Questions never count."""
    found: list[str] = []
    corrected = False
    for index, raw in enumerate(_SENTENCE.split(prompt[:SCAN_CHARS])):
        sentence = one_line(raw)
        if not sentence or sentence.endswith("?"):
            continue
        norm = sentence.replace("\u2019", "'")
        body = _LEAD_IN.sub("", norm)
        opening = index == 0 and _CORRECTION_OPENING.match(norm) and not _NOT_CORRECTION.match(norm)
        if opening or _CORRECTION_ANY.search(norm):
            corrected = True
        elif not (_DECISION_START.match(body) or _DECISION_ANY.search(norm)):
            if not _WEAK_CORRECTION.search(norm):
                continue
            corrected = True
        found.append(sentence)
    if not found:
        return None, []
    return ("correction" if corrected else "decision"), found
