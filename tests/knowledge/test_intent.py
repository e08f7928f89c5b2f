"""Intent ranking over one large output: the needle lines come back, in a small reply."""

from __future__ import annotations

import random

from context_kernel.knowledge.intent import intent_excerpt
from context_kernel.knowledge.templates import TemplateMiner

BUDGET = 3400


def access_log(planted: dict[int, str], total: int = 3000) -> str:
    rng = random.Random(7)
    lines = [f'10.0.{rng.randrange(256)}.{rng.randrange(256)} - - [30/Nov/2026:12:{n % 60:02d}:00 +0000] '
             f'"GET /products/{rng.randrange(9999)} HTTP/1.1" 200 {rng.randrange(500, 600)}' for n in range(total)]
    for at, line in planted.items():
        lines[at] = line
    return "\n".join(lines)


def test_a_502_comes_back_though_it_shares_no_word_with_the_intent() -> None:
    needle = '10.0.3.7 - - [30/Nov/2026:13:00:00 +0000] "POST /checkout HTTP/1.1" 502 0'
    excerpt = intent_excerpt(access_log({1234: needle}), "server errors", BUDGET)
    assert f"1235: {needle}" in excerpt.text
    # Response sizes of 5xx-looking numbers (500-599 bytes) are not statuses.
    assert excerpt.shown_lines <= 3, excerpt.text


def test_the_slowest_request_comes_back() -> None:
    rng = random.Random(3)
    lines = [f"request id={rng.randrange(10**6):06d} path=/api/search took {rng.randrange(20, 90)}ms"
             for _ in range(2000)]
    lines[1500] = "request id=004711 path=/api/search took 48213ms"
    excerpt = intent_excerpt("\n".join(lines), "which request was slow", BUDGET)
    assert "1501: request id=004711 path=/api/search took 48213ms" in excerpt.text


def test_a_vague_intent_sharing_one_word_with_every_line_stays_small() -> None:
    lines = [f"2026-11-30 12:00:{n % 60:02d} INFO sync copied {n % 97} files from bucket-{n % 9}"
             for n in range(3000)]
    lines[2100] = "2026-11-30 12:35:00 FATAL sync giving up after 5 retries"
    excerpt = intent_excerpt("\n".join(lines), "did the sync work", BUDGET)
    assert "FATAL sync giving up after 5 retries" in excerpt.text
    assert len(excerpt.text.encode()) <= BUDGET
    # Lines of the common template are capped, though every one holds the intent's word.
    assert excerpt.text.count("INFO sync copied") <= 3, excerpt.text


def test_a_rare_template_is_shown_whole_beyond_the_per_template_cap() -> None:
    lines = [f"tests/test_mod{n % 40}.py::test_case_{n} PASSED" for n in range(900)]
    failing = [f"tests/test_api.py::test_refund_{k} FAILED" for k in range(5)]
    for k, line in enumerate(failing):
        lines[100 + 150 * k] = line
    excerpt = intent_excerpt("\n".join(lines), "failing tests", BUDGET)
    assert all(line in excerpt.text for line in failing), excerpt.text
    assert excerpt.text.count("PASSED") <= 3


def test_lines_differing_in_numbers_share_a_template_and_outcomes_do_not() -> None:
    miner = TemplateMiner(frozenset({"passed", "failed"}))
    a, _ = miner.add("GET /api/users 200 12ms worker-3")
    b, _ = miner.add("GET /api/users 200 48ms worker-5")
    c, _ = miner.add("test_x PASSED")
    d, _ = miner.add("test_y FAILED")
    assert a == b and c != d
    assert miner.count[a] == 2
    # Merged into one template, lines keep their own shape: "will be destroyed" among 26 "created".
    shapes = [miner.add(f"# aws_instance.web{n} will be created") for n in range(26)]
    gone = miner.add("# aws_s3_bucket.archive will be destroyed")
    assert gone[0] == shapes[0][0] and miner.shape_count[gone[1]] == 1


def test_the_indented_location_after_a_compiler_error_comes_with_it() -> None:
    lines = []
    for n in range(300):
        lines += [f"warning: unused variable: `tmp{n}`", f"  --> src/module{n % 9}.rs:{n}:5", ""]
    lines[450:450] = ["error[E0308]: mismatched types", "  --> src/billing/invoice.rs:73:15"]
    excerpt = intent_excerpt("\n".join(lines), "what is the compiler error", BUDGET)
    assert "error[E0308]: mismatched types" in excerpt.text
    assert "--> src/billing/invoice.rs:73:15" in excerpt.text


def test_the_largest_value_comes_back_when_the_intent_word_is_on_every_line() -> None:
    rng = random.Random(5)
    lines = [f"GET /api/item/{n} status=200 bytes={rng.randrange(900, 1100)} ok" for n in range(2000)]
    lines[1234] = "GET /api/item/1234 status=200 bytes=98000000 ok"
    # "item" is on every line and "largest" on none: only the numeric extreme tells the line apart.
    excerpt = intent_excerpt("\n".join(lines), "which item was largest", BUDGET)
    assert "1235: GET /api/item/1234 status=200 bytes=98000000 ok" in excerpt.text
