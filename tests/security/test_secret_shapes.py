"""Secrets found by the shape of the value (security/secret_shapes.py), through `redact_text`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.security.secret_probe import PEM_BODY, PROBE, SECRETS, WALKTHROUGH_PROMPTS

from context_kernel.security import redact_text
from context_kernel.security.redact import WHOLE_TEXT_LIMIT, redact_output
from context_kernel.security.secret_names import MARKER_WORD
from context_kernel.security.secret_shapes import CACHE_NAME, cached_shapes, default_shapes, library_version


@pytest.mark.parametrize("shape", list(PROBE))
def test_no_secret_of_the_probe_survives_redaction(shape: str) -> None:
    clean = redact_text(PROBE[shape])
    assert MARKER_WORD in clean
    assert [s for s in SECRETS if s in clean] == []


def test_the_walkthrough_prompts_keep_their_words_and_lose_their_secrets() -> None:
    for prompt in WALKTHROUGH_PROMPTS:
        clean = redact_text(prompt)
        assert [s for s in SECRETS if s in clean] == [], clean
    assert redact_text(WALKTHROUGH_PROMPTS[1]).startswith("The staging db: mysql -uapp -p[REDACTED password] staging.")


def test_a_pem_block_keeps_its_armour_and_loses_its_body_even_when_cut_off() -> None:
    clean = redact_text(PROBE["PEM block"])
    assert clean == ("deploy key:\n-----BEGIN RSA PRIVATE KEY-----[REDACTED private-key]-----END RSA PRIVATE KEY-----"
                     "\nthanks")
    clipped = redact_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}…")
    assert PEM_BODY[:20] not in clipped


@pytest.mark.parametrize(("text", "expected"), [
    ("curl -u admin:CurlPa55word https://x", "curl -u admin:[REDACTED password] https://x"),
    ("docker login --username bob -p=D0ck3r registry", "docker login --username bob -p=[REDACTED password] registry"),
    ("sshpass -p 'S3cr3t!' ssh host", "sshpass -p '[REDACTED password]' ssh host"),
    ("git clone https://x-oauth-basic@github.com/a/b", "git clone https://x-oauth-basic@github.com/a/b"),
    (f"the token is {'Ab3' * 5}.", "the token is [REDACTED token]."),
    # Commands and keys inside a string literal of code, after an escaped newline.
    ("s = 'x\\nmysql -uroot -pS3cret db\\ndocker login -p D0ck3r r'", "s = 'x\\nmysql -uroot -p[REDACTED password] db"
                                                                     "\\ndocker login -p [REDACTED password] r'"),
    ("env = 'A=1\\nAPI_TOKEN=abc123\\n'", "env = 'A=1\\nAPI_TOKEN=[REDACTED token]'"),  # the value runs on
])
def test_flag_and_prose_forms(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize("text", [
    "mkdir -p build && sort -u names.txt && git add -u",
    "ssh git@github.com && git clone https://bob@example.com/repo.git",
    "commit 3f1c2a9e5b7d4c1e9a2f0b8c7d6e5f4a3b2c1d0e Merge: 1a2b3c4",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "mysql -h db -P 3306 -p shop",
    "the token is expired; the password is wrong; my password is too short",
    "pip install scikit-learn && python -m sk-learn-benchmarks",
    "docker run -p 8080:80 -u 1000:1000 nginx",
    "uuid 123e4567-e89b-12d3-a456-426614174000 and 10.0.0.1 and 93.184.216.34",
])
def test_ordinary_commands_and_ids_are_left_alone(text: str) -> None:
    assert redact_text(text) == text


def test_the_hook_cache_holds_the_library_patterns_and_follows_its_version(tmp_path: Path) -> None:
    first = cached_shapes(tmp_path)
    doc = json.loads((tmp_path / CACHE_NAME).read_text())
    assert doc["detect_secrets"] == library_version()
    assert first.library == default_shapes().library and len(first.library) >= 20
    # A cache from another detect-secrets version (or a torn one) is rebuilt, not trusted.
    old = {"detect_secrets": "0.0-old", "format": 2, "patterns": [["x", 0, "jwt"]]}
    (tmp_path / CACHE_NAME).write_text(json.dumps(old))
    assert cached_shapes(tmp_path).library == first.library
    # A cache of the first layout (patterns without their kinds) is rebuilt too.
    (tmp_path / CACHE_NAME).write_text(json.dumps({"detect_secrets": library_version(), "patterns": [["x", 0]]}))
    assert cached_shapes(tmp_path).library == first.library
    (tmp_path / CACHE_NAME).write_text("{torn")
    assert cached_shapes(tmp_path).library == first.library
    assert "[REDACTED slack-token]" in redact_text(PROBE["xoxb-"], shapes=cached_shapes(tmp_path))


def _log(lines: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"2026-01-01T00:00:{i % 60:02d} INFO worker-{i % 7} GET /api/items/{rng.randrange(10**6)} "
            f"in {rng.random():.3f}s status=200" for i in range(lines)]


@pytest.mark.parametrize("seed", range(5))
def test_large_output_loses_every_probe_secret_wherever_it_was_printed(seed: int) -> None:
    rng = random.Random(seed)
    lines = _log(8000, seed)
    for text in [*PROBE.values(), *WALKTHROUGH_PROMPTS]:
        lines.insert(rng.randrange(len(lines)), text)
    big = "\n".join(lines)
    assert len(big) > WHOLE_TEXT_LIMIT
    clean = redact_output(big)
    assert [s for s in SECRETS if s in clean] == []
    assert clean == redact_text(big)  # line by line, the same result as every rule over the whole text


def test_small_output_is_redacted_whole() -> None:
    text = f"key: 'one\n{'x' * 30}'"  # a quoted value across lines: only the whole-text rules see it
    assert redact_output(text) == redact_text(text)


_context = st.text(alphabet=st.sampled_from(list("abc XYZ019=:,.;()[]{}'\"\n\t-_/@")), max_size=30)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from(sorted(PROBE)), before=_context, after=_context, gap=st.sampled_from([" ", "\n", "; "]))
def test_a_probe_secret_does_not_survive_whatever_text_surrounds_it(shape: str, before: str, after: str,
                                                                    gap: str) -> None:
    # Each secret stands in the sentence it was found in, with arbitrary text on either side.
    text = f"{before}{gap}{PROBE[shape]}{gap}{after}"
    clean = redact_text(text)
    assert [s for s in SECRETS if s in clean] == []
    assert redact_output(text) == clean


def test_a_print_flood_of_one_character_is_no_hint_of_a_secret_but_a_varied_token_is() -> None:
    # Every 'xxxx…' line counted as hinted made redacting an 8 MB flood run every rule over it (10 s).
    from context_kernel.security.redact import _hinted_lines

    flood = ("x" * 1000 + "\n") * 200 + "=" * 80 + "\n" + "0" * 64 + "\n"
    assert _hinted_lines(flood) == []
    token = "aB3dE6gH9jK2mN5pQ8rS1tU4vW7xY0zA"
    text = flood + f"export {token}\n" + "x" * 50 + "\n"
    start = text.index("export")
    assert _hinted_lines(text) == [(start, start + len(f"export {token}"))]
