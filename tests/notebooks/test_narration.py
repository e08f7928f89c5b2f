"""The agent's words between its cells come from the client's transcript: a Claude Code transcript (fixture in the
documented format) becomes the user's prompt and the agent's text, without tool traffic, thinking, the client's
own lines or a subagent's; redacted; and the transcript that cites the session's executions is the one chosen."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from context_kernel.notebooks.narration import MAX_ENTRY_CHARS, narration
from context_kernel.store.transcripts import TranscriptRow

FIXTURE = Path(__file__).parent / "fixtures" / "claude_code_transcript.jsonl"
START = datetime.fromisoformat("2026-12-08T10:00:00+00:00").timestamp()


def row(path: Path, first: float = START, last: float = START + 60) -> TranscriptRow:
    return TranscriptRow("5f1c", "claude-code", "/p", str(path), first, last)


def test_a_claude_code_transcript_gives_the_prompt_and_the_agents_own_words() -> None:
    said = narration([row(FIXTURE)], START, START + 60, {7})
    assert [(n.role, n.text) for n in said] == [
        ("user", "Which penguin species is heaviest? Use data/penguins.csv."),
        ("agent", "I'll load the table in the kernel and take the maximum.\n\n"
                  "(The token I was given is [REDACTED github-token].)"),
        ("agent", "Gentoo is the heaviest: 6,300 g [#7]."),
    ]
    assert [n.at - START for n in said] == [1, 3, 8]


def test_it_starts_at_the_prompt_that_led_to_the_first_call_and_ends_at_until(tmp_path: Path) -> None:
    earlier = {"type": "user", "timestamp": "2026-12-08T09:59:00Z", "message": {"role": "user", "content": "Old work"}}
    before = tmp_path / "t.jsonl"
    before.write_text(json.dumps(earlier) + "\n" + FIXTURE.read_text())
    said = narration([row(before)], START + 5, START + 60, {7})  # the first call at 10:00:05
    assert [n.text[:5] for n in said] == ["Which", "I'll ", "Gentoo"[:5]]
    assert [n.text[:5] for n in narration([row(before)], START + 5, START + 7, {7})] == ["Which", "I'll "]
    assert narration([row(FIXTURE, START + 100, START + 200)], START, START + 60, {7}) == []  # not in use then


def test_of_two_transcripts_in_use_the_one_citing_the_sessions_executions_is_chosen(tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"type": "user", "timestamp": "2026-12-08T10:00:02Z",
                                 "message": {"role": "user", "content": "Another window's question"}}) + "\n")
    both = [row(FIXTURE), row(other)]
    assert "Another window's question" not in [n.text for n in narration(both, START, START + 60, {7})]
    # neither cites the session: both are told (the project and the time are all there is to go by)
    assert "Another window's question" in [n.text for n in narration(both, START, START + 60, {99})]


def test_long_text_is_capped_and_a_missing_or_foreign_file_gives_nothing(tmp_path: Path) -> None:
    long = tmp_path / "long.jsonl"
    long.write_text(json.dumps({"type": "assistant", "timestamp": "2026-12-08T10:00:02Z", "message": {
        "role": "assistant", "content": [{"type": "text", "text": "word " * 5000}]}}) + "\n")
    (said,) = narration([row(long)], START, START + 60, set())
    assert len(said.text) < MAX_ENTRY_CHARS + 50 and said.text.endswith("more characters]")
    assert narration([row(tmp_path / "gone.jsonl")], START, START + 60, set()) == []
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"messages": [{"role": "user", "parts": ["hi"]}]}')
    assert narration([row(foreign)], START, START + 60, set()) == []


def test_a_codex_rollout_is_read_too(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    lines = [
        {"timestamp": "2026-12-08T10:00:01Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>x"}]}},
        {"timestamp": "2026-12-08T10:00:02Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Count the rows"}]}},
        {"timestamp": "2026-12-08T10:00:03Z", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "c1", "output": "3\n[#4]"}},
        {"timestamp": "2026-12-08T10:00:04Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "3 rows [#4]."}]}},
    ]
    rollout.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert [(n.role, n.text) for n in narration([row(rollout)], START, START + 60, {4})] == [
        ("user", "Count the rows"), ("agent", "3 rows [#4].")]


def test_a_transcript_that_grew_is_read_again(tmp_path: Path) -> None:
    live = tmp_path / "live.jsonl"
    say = {"type": "user", "timestamp": "2026-12-08T10:00:02Z", "message": {"role": "user", "content": "First"}}
    live.write_text(json.dumps(say) + "\n")
    assert [n.text for n in narration([row(live)], START, START + 60, set())] == ["First"]
    later = {"type": "assistant", "timestamp": "2026-12-08T10:00:05Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "Then this"}]}}
    with live.open("a") as f:
        f.write(json.dumps(later) + "\n")
    assert [n.text for n in narration([row(live)], START, START + 60, set())] == ["First", "Then this"]
