"""Review: secrets that survived redaction in forms the spec lists (secret keys, secret env values).

Event text is clipped (`text.clip`: the start kept, "…" appended) before it is redacted, so a value
often arrives without its closing quote, or cut short.
"""

from __future__ import annotations

import pytest
from reviewcli import HookCli

from context_kernel.security import redact_text
from context_kernel.security.redact import MIN_SECRET_LENGTH

SECRET = "s3cr3tVALUEabcdef"


@pytest.mark.parametrize("text", [
    f'token="{SECRET[:10]}…',
    f"password='{SECRET[:10]}…",
    f'{{"api_key": "{SECRET[:10]}…',
    f"'password' => '{SECRET[:9]}…",
    f'export API_KEY="{SECRET[:10]}…',
    f'--password "{SECRET[:8]}…',
    f"--password '{SECRET[:8]}…",
    f'token="{SECRET}',  # a user's unbalanced quote, no clipping at all
])
def test_a_quoted_secret_without_its_closing_quote_is_redacted(text: str) -> None:
    assert SECRET[:8] not in redact_text(text)


def test_a_closed_quote_still_ends_the_redacted_value() -> None:
    assert redact_text(f'token="{SECRET}" and more') == 'token="[REDACTED]" and more'


def test_a_secret_value_cut_short_by_clipping_is_redacted() -> None:
    out = redact_text(f"deploy with {SECRET[:12]}…", [SECRET])
    assert SECRET[:6] not in out
    assert out == "deploy with [REDACTED]…"


def test_a_short_word_before_an_ellipsis_is_kept() -> None:
    # Only a prefix of at least MIN_SECRET_LENGTH characters counts: "s3c…" is noise, not a secret.
    assert redact_text("and s3c…", [SECRET]) == "and s3c…"


def test_a_url_password_without_a_user_is_redacted() -> None:
    assert SECRET not in redact_text(f"redis://:{SECRET}@cache:6379/0")


def test_a_prompt_clipped_in_the_middle_of_a_secret_leaves_no_part_of_it_in_the_spool(cli: HookCli) -> None:
    token = "sk-live-" + "0123456789abcdefghij" * 3
    # The intent event keeps the first 300 characters: the token starts at 281 and is cut after 18 characters.
    prompt = "x" * 280 + " " + token + " is the key, and export API_KEY=\"" + token + "\" too"
    payload = {"session_id": "s1", "cwd": str(cli.project), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    assert cli.run("claude-code", "UserPromptSubmit", payload, DEPLOY_API_TOKEN=token).returncode == 0
    rows = cli.spool_rows()
    assert [r["type"] for r in rows] == ["prompt"]
    assert token[:MIN_SECRET_LENGTH] not in rows[0]["data"]
