"""The redactor over issue 25's corpus: every secret in every placement loses every part of its value
and is named by its kind; no near miss is touched; the reported defects stay fixed."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.security.secret_corpus import FORMS, KIND_OF_FORM, NEAR_MISSES, PLACEMENTS, SECRETS

from context_kernel.security import redact_text
from context_kernel.security.redact import redact_output, url_without_credentials, urls_cleaned
from context_kernel.security.secret_names import KINDS, MARKER
from context_kernel.security.secret_shapes import default_shapes

WINDOW = 8
"""No run of this many characters of a secret may survive: a marker keeps no part of the value."""
PARTS = {s.name: s.secret_parts for s in SECRETS}


def surviving(name: str, text: str) -> list[str]:
    """The windows of `name`'s secret parts still in `text` (markers count as opaque)."""
    text = MARKER.sub("\0", text)
    return sorted({p[i:i + WINDOW] for p in PARTS[name] for i in range(len(p) - WINDOW + 1) if p[i:i + WINDOW] in text})


def test_the_corpus_holds_every_form_the_issue_lists_in_every_placement() -> None:
    assert len(SECRETS) >= 24
    assert all(tuple(s.forms) == PLACEMENTS for s in SECRETS)
    kinds = {s.kind for s in SECRETS}
    assert {"aws-access-key-id", "aws-secret", "github-token", "gitlab-token", "npm-token", "pypi-token",
            "slack-token", "slack-webhook", "stripe-key", "openai-key", "anthropic-key", "google-api-key",
            "azure-storage-key", "jwt", "private-key", "url-password", "url-token", "url-credential", "password",
            "key", "token"} <= kinds
    assert kinds <= set(KINDS)
    assert len(set(FORMS.values())) == len(FORMS)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_no_part_of_a_corpus_secret_survives_and_its_marker_names_its_kind(form: str) -> None:
    clean = redact_text(FORMS[form])
    assert surviving(form.split("/")[0], clean) == []
    assert f"[REDACTED {KIND_OF_FORM[form]}]" in clean, clean


@pytest.mark.parametrize("form", sorted(FORMS))
def test_redacting_twice_changes_nothing(form: str) -> None:
    once = redact_text(FORMS[form])
    assert redact_text(once) == once


@pytest.mark.parametrize("text", NEAR_MISSES, ids=[t[:40] for t in NEAR_MISSES])
def test_near_misses_are_left_as_they_are(text: str) -> None:
    assert redact_text(text) == text
    assert redact_output(text) == text


def test_a_large_output_loses_every_corpus_secret_and_keeps_every_near_miss() -> None:
    rng = random.Random(7)
    lines = [f"2026-01-01T00:00:{i % 60:02d} INFO worker-{i % 7} GET /api/items/{rng.randrange(10**6)} status=200"
             for i in range(6000)]
    for text in [*FORMS.values(), *NEAR_MISSES]:
        lines.insert(rng.randrange(len(lines)), text)
    clean = redact_output("\n".join(lines))
    assert [s.name for s in SECRETS if surviving(s.name, clean)] == []
    assert all(text in clean for text in NEAR_MISSES)


_context = st.text(alphabet=st.sampled_from(list("abc XYZ019=:,.;()[]{}'\"\n\t-_/@?&")), max_size=30)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(form=st.sampled_from(sorted(FORMS)), before=_context, after=_context, gap=st.sampled_from([" ", "\n", "; "]))
def test_a_corpus_secret_does_not_survive_whatever_text_surrounds_it(form: str, before: str, after: str,
                                                                     gap: str) -> None:
    text = f"{before}{gap}{FORMS[form]}{gap}{after}"
    assert surviving(form.split("/")[0], redact_text(text)) == []


# --- the defects reported in issue 25, one by one -------------------------------------------------


def token(n: int, alphabet: str = "aB3dE6gH9jK2mN5pQ8rS1tU4vW7xY0zA") -> str:
    """`n` characters cycling through `alphabet`: fixed values, made at run time."""
    return (alphabet * (n // len(alphabet) + 1))[:n]


def test_a_bare_npm_token_is_redacted() -> None:
    npm = "np" + "m_" + token(36)
    assert redact_text(f"use {npm} to publish") == "use [REDACTED npm-token] to publish"


def test_a_stripe_key_longer_than_24_characters_keeps_no_tail() -> None:
    key = "sk" + "_live_" + token(24) + "3456789abcdefXYZ"
    assert redact_text(f"stripe {key}") == "stripe [REDACTED stripe-key]"


def test_a_jwt_loses_its_signature_too() -> None:
    jwt = "eyJ" + token(30) + ".eyJ" + token(40) + "." + token(43, "abcdefABCDEF0123456789_-")
    assert redact_text(f"Authorization header was {jwt}") == "Authorization header was [REDACTED jwt]"


def test_a_github_token_cut_short_is_redacted() -> None:
    cut = "gh" + "p_" + token(30)
    assert redact_text(f"token {cut}") == "token [REDACTED github-token]"
    assert redact_text(f"token {cut[:12]}…") == "token [REDACTED github-token]…"  # clipped to 8 characters


def test_a_password_given_with_the_word_password_is_redacted() -> None:
    assert redact_text("connect with password hunter2pass") == "connect with password [REDACTED password]"


@pytest.mark.parametrize("said", [
    "the password is swordfish", "The password is swordfish.", "set the password to swordfish, then log in",
    "the password is swordfish and the user is bob", "my password is 'one' of course",
    "the PIN is 4821 for the door", "the password is hunter2 for the admin page",
])
def test_a_password_said_in_prose_is_redacted_even_when_it_is_a_word(said: str) -> None:
    """A word is a prose password's value when its clause ends there (or a new one starts, or it is
    quoted); only a sentence that goes on past it (`is one of the following`) reads as prose."""
    clean = redact_text(said)
    assert "[REDACTED password]" in clean
    assert not any(v in clean for v in ("swordfish", "'one'", "4821", "hunter2"))


def test_aws_configure_set_loses_the_secret_key() -> None:
    secret = token(40, "wJalrXUtnFEMI/K7MDENG/bPxRfiCY+8fake4Kq2")
    assert redact_text(f"aws configure set aws_secret_access_key {secret}") == (
        "aws configure set aws_secret_access_key [REDACTED aws-secret]")


def test_query_string_credentials_leave_a_url_shown_or_stored() -> None:
    url = "https://bob:pw-" + token(10) + "@api.example.com/v1/items?api_key=S3cr3tV4lue99&page=2"
    assert url_without_credentials(url) == "https://api.example.com/v1/items?api_key=[REDACTED url-credential]&page=2"


def test_our_own_messages_quoting_a_url_keep_their_words() -> None:
    message = "Refused file:///etc/passwd: scheme file (only http and https are fetched)"
    assert urls_cleaned(message) == message
    assert redact_text(message) == message  # a path segment is never a key
    signed = "Could not fetch https://x.example.com/a?token=" + token(20) + "&b=1: 404 Not Found"
    assert urls_cleaned(signed) == ("Could not fetch https://x.example.com/a?token=[REDACTED url-credential]&b=1: "
                                    "404 Not Found")


# --- the kinds ------------------------------------------------------------------------------------


def test_every_detect_secrets_pattern_is_named_by_a_kind_of_its_own() -> None:
    assert {kind for _, _, kind in default_shapes().library} <= set(KINDS) - {"secret"}

