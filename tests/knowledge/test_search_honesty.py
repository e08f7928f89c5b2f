"""Search says when a query term matches nothing, leaves identifiers uncorrected, and names
duplicates once."""

from __future__ import annotations

from pathlib import Path

import pytest

from context_kernel.knowledge.search import identifiers, search
from context_kernel.knowledge.service import KnowledgeService
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

pytestmark = pytest.mark.anyio


def test_identifiers_are_tokens_with_underscores_digits_dots_or_camel_case() -> None:
    assert identifiers("where is API_TOKEN set, and is useEffect or v2.1 or os.path used?") == [
        "API_TOKEN", "useEffect", "v2.1", "os.path"]
    assert identifiers("how do I retry a request") == []


async def test_an_identifier_is_not_corrected_into_an_unrelated_word(kb: KnowledgeService) -> None:
    await kb.index_text(label="story", name="story.md", text="# Story\nThe road not taken was longer.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "API_TOKEN"))
    assert result.corrections == {}
    assert result.hits == []
    assert result.missing == ["API_TOKEN"]


async def test_an_identifier_found_nowhere_in_code_returns_a_plain_note_not_a_node_section(
        kb: KnowledgeService) -> None:
    await kb.index_text(label="node", name="node.md", text=(
        "# Native addons\n```js\nconst prep = require('prep');\nprep.cif(ffi);\n```\n"))
    await kb.index_text(label="libffi", name="libffi.md", text="# Calling\nSee ffi_prep_cif in the manual.\n")
    reply = await kb.search(["ffi_prep_cif"], session_id="s", content_type="code")
    assert "Native addons" not in reply.text
    assert "ffi_prep_cif" in reply.text and "no code section holds" in reply.text


async def test_an_identifier_that_exists_is_found(kb: KnowledgeService) -> None:
    await kb.index_text(label="cfg", name="cfg.md", text="# Settings\nSet API_TOKEN in the environment.\n")
    reply = await kb.search(["API_TOKEN"], session_id="s")
    assert "Set API_TOKEN in the environment" in reply.text and "holds" not in reply.text


async def test_a_word_found_nowhere_is_named_next_to_the_results_of_the_others(kb: KnowledgeService) -> None:
    await kb.index_text(label="doc", name="doc.md", text="# Pooling\nThe connection pool keeps sockets open.\n")
    reply = await kb.search(["connection pool zyzzogeton"], session_id="s")
    assert "The connection pool keeps sockets open" in reply.text
    assert "'zyzzogeton'" in reply.text


async def test_a_misspelling_whose_trigrams_all_occur_elsewhere_is_still_corrected(kb: KnowledgeService) -> None:
    # `vacum`'s trigrams (vac, acu, cum) are all in a section holding "vacuum" and "document":
    # the trigram index alone called it found and left it uncorrected.
    await kb.index_text(label="pg", name="pg.md", text=(
        "# Routine maintenance\nRun VACUUM to reclaim space; this document explains when.\n"))
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "vacum"))
    assert result.corrections == {"vacum": "vacuum"}


async def test_a_misspelling_that_stems_oddly_is_corrected_to_what_was_meant(kb: KnowledgeService) -> None:
    # `analize` stems to `anal`, one edit from `angl` (angles), two from `analyz` (analyze).
    await kb.index_text(label="a", name="a.md", text="# ANALYZE\nANALYZE collects statistics about tables.\n")
    await kb.index_text(label="b", name="b.md", text="# Trigonometry\nAngles are given in radians.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "what does analize do"))
    assert result.corrections == {"analize": "analyze"}
    assert result.hits[0].chunk.label == "a"


async def test_a_misspelt_identifier_is_respelled_into_the_identifier_the_text_holds(kb: KnowledgeService) -> None:
    await kb.index_text(label="cfg", name="cfg.md", text=(
        "# Automatic vacuuming\n`autovacuum_naptime` (integer): the minimum delay between autovacuum runs.\n"))
    await kb.index_text(label="other", name="other.md", text="# Control\nThe control file names the naptime.\n")
    reply = await kb.search(["what does autovacum_naptime control"], session_id="s", limit=1)
    assert "minimum delay between autovacuum runs" in reply.text
    assert "'autovacum_naptime' — searched 'autovacuum_naptime'" in reply.text


async def test_an_identifier_is_not_respelled_into_one_the_text_does_not_hold(kb: KnowledgeService) -> None:
    # `tokn` is one edit from `token`, but no section holds API_TOKEN: still missing, not bent.
    await kb.index_text(label="story", name="story.md", text="# Tokens\nThe API hands out a token.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "API_TOKN"))
    assert (result.corrections, result.hits, result.missing) == ({}, [], ["API_TOKN"])


async def test_a_corrected_common_word_ranks_as_the_right_spelling_does(kb: KnowledgeService) -> None:
    # Ranked as unknown, the corrected word also went to the substring (trigram) index, which
    # brings in sections that only hold it inside another word.
    await kb.index_text(label="uuid", name="uuid.md", text="# UUID\nThe function gen_random_uuid returns a UUID.\n")
    for i in range(3):
        await kb.index_text(label=f"f{i}", name=f"f{i}.md", text=f"# Part {i}\nA function of part {i}.\n")
    await kb.index_text(label="noise", name="noise.md", text="# Faults\nA dysfunctional, malfunctioning pump.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    repo = KnowledgeRepository(db.engine)
    typo = await db.run(lambda: search(repo, "uuid fucntion", limit=10))
    right = await db.run(lambda: search(repo, "uuid function", limit=10))
    assert typo.corrections == {"fucntion": "function"}
    assert [h.chunk.label for h in typo.hits] == [h.chunk.label for h in right.hits]


async def test_a_word_indexed_after_a_search_can_be_the_correction_of_the_next(kb: KnowledgeService) -> None:
    # The stems fuzzy correction compares with are kept between searches while the index is unchanged.
    await kb.index_text(label="a", name="a.md", text="# Animals\nThe wombat sleeps by day.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    repo = KnowledgeRepository(db.engine)
    assert (await db.run(lambda: search(repo, "wombta"))).corrections == {"wombta": "wombat"}
    await kb.index_text(label="b", name="b.md", text="# More animals\nThe wallaby hops.\n")  # `w` again
    result = await db.run(lambda: search(repo, "wolaby"))  # two edits: only `correct` finds it
    assert result.corrections == {"wolaby": "wallaby"} and result.hits[0].chunk.label == "b"


# Words that the index lacks but that are words: what the held-out evaluation saw "corrected" into
# another word (and searched as that word), each a false note and a wrong result.
@pytest.mark.parametrize(("word", "lookalike"), [
    ("defect", "detect"), ("complain", "complicated"), ("readline", "really"), ("stop", "step"),
    ("three", "there")])
async def test_a_real_word_the_index_lacks_is_not_corrected_into_a_lookalike(
        kb: KnowledgeService, word: str, lookalike: str) -> None:
    await kb.index_text(label="manual", name="manual.md", text=(
        f"# Notes\nThe {lookalike} option is documented here. We {lookalike} it often.\n"
        "# Other\nUnrelated text about packages and mirrors.\n"))
    reply = await kb.search([f"{word} option"], session_id="s")
    assert "searched" not in reply.text, reply.text
    assert f"'{word}'" in reply.text  # named as found nowhere, next to the results of the other word


async def test_a_real_typo_is_still_corrected(kb: KnowledgeService) -> None:
    await kb.index_text(label="manual", name="manual.md", text="# Kubernetes\nDeploy to kubernetes with helm.\n")
    reply = await kb.search(["kuberntes deploy"], session_id="s")
    assert "searched 'kubernetes'" in reply.text and "Deploy to kubernetes" in reply.text


async def test_an_absent_cve_is_said_to_be_absent_before_any_other_cve(kb: KnowledgeService) -> None:
    await kb.index_text(label="advisories", name="advisories.md", text=(
        "# CVE-2023-24329\nurllib.parse accepted URLs starting with blanks.\n"
        "# CVE-2023-27043\nemail.utils parsed addresses with special characters wrongly.\n"))
    reply = await kb.search(["CVE-2023-40217"], session_id="s")
    assert "no section holds 'CVE-2023-40217'" in reply.text
    assert "CVE-2023-24329" not in reply.text and "CVE-2023-27043" not in reply.text
    assert "searched" not in reply.text


def test_a_hyphenated_token_with_digits_is_one_identifier() -> None:
    assert identifiers("is CVE-2023-40217 fixed in v3.11.5 of non-blocking io?") == ["CVE-2023-40217", "v3.11.5"]


async def test_a_typo_one_edit_from_two_indexed_stems_is_corrected_to_the_real_word(kb: KnowledgeService) -> None:
    """`convetion` is one edit from `convertion` and from `convention`; both stem to indexed stems and
    the more frequent one, `convert`, won. The word meant is a word: `convention`."""
    for i in range(3):  # `convert` in more sections than `convention`
        await kb.index_text(label=f"convert-{i}", name=f"convert-{i}.md", text=f"# Converting {i}\nConvert it.\n")
    await kb.index_text(label="abi", name="abi.md", text="# Calling convention\nThe target has no red zone.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "calling convetion red zone"))
    assert result.corrections == {"convetion": "convention"}
    assert result.hits and result.hits[0].chunk.label == "abi"


async def test_a_typo_keeps_its_first_letter_when_it_is_respelled(kb: KnowledgeService) -> None:
    """`alocate` is one edit from `allocate` and from `locate`; the more frequent `locate` won."""
    for i in range(3):
        await kb.index_text(label=f"find-{i}", name=f"find-{i}.md", text=f"# Finding {i}\nLocate the file first.\n")
    await kb.index_text(label="alloc", name="alloc.md", text="# Capacity\nwith_capacity(0) does not allocate.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "does it alocate"))
    assert result.corrections == {"alocate": "allocate"}
    assert result.hits and result.hits[0].chunk.label == "alloc"


async def test_a_correction_whose_stem_the_index_would_stem_again_still_finds_its_word(tmp_path: Path) -> None:
    """`recurisve` is corrected to the stem of `recursive`, `recurs`; searched as it is, the index's
    tokenizer stemmed it again, to `recur`: in a project nothing held it ("no section holds 'recurisve'")."""
    db = Database.open(tmp_path / "kb.sqlite3")
    try:
        repo = KnowledgeRepository(db.engine, project=str(tmp_path))
        kb = KnowledgeService(db=db, repo=repo, project_dir=tmp_path, search_budget=6144)
        await kb.index_text(label="grep", name="grep.txt",
                            text="GREP(1)\n\n-r, --recursive\n    Read all files under each directory, recursively.\n")
        await kb.index_text(label="other", name="other.txt", text="OTHER(1)\n\nThe function returns when it ends.\n")
        result = await db.run(lambda: search(repo, "grep recurisve"))
    finally:
        db.close()
    assert result.corrections == {"recurisve": "recursive"}, result.corrections
    assert [hit.chunk.label for hit in result.hits][:1] == ["grep"]
    assert not result.missing


async def test_two_swapped_letters_are_respelled_before_a_more_frequent_word(kb: KnowledgeService) -> None:
    """`modle` is one edit from `model` (two letters swapped) and from `module`; the more frequent `module` won."""
    for i in range(3):
        await kb.index_text(label=f"mod-{i}", name=f"mod-{i}.md", text=f"# Modules {i}\nImport the module.\n")
    await kb.index_text(label="eval", name="eval.md", text="# Holdout\nThe quantized model scored 0.861.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "quantized modle score"))
    assert result.corrections == {"modle": "model"}
    assert result.hits and result.hits[0].chunk.label == "eval"


async def test_a_typo_of_a_stop_word_is_dropped_not_searched_as_a_lookalike(kb: KnowledgeService) -> None:
    """`wich` is one edit from `which` and from `with`: searched as `with`, it ranked sections by that word."""
    await kb.index_text(label="lto", name="lto.md", text="# lto\nthin: perform thin LTO, faster to link than fat.\n")
    for i in range(3):
        await kb.index_text(label=f"w-{i}", name=f"w-{i}.md", text=f"# Linking {i}\nLink with with with fat.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "thin or fat lto wich links faster"))
    assert "wich" not in result.corrections and "wich" not in result.missing
    assert result.hits and result.hits[0].chunk.label == "lto"
