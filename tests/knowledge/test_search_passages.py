"""What a reply carries: the passage for each concept a question names, the page an error message names,
and about a kilobyte per hit instead of whole sections."""

from __future__ import annotations

import pytest

from context_kernel.knowledge.reply import HIT_BYTES
from context_kernel.knowledge.service import KnowledgeService

pytestmark = pytest.mark.anyio


def filler(topic: str, n: int) -> str:
    return "".join(f"Paragraph {i} says more about {topic} and nothing else of note.\n\n" for i in range(n))


async def test_a_question_naming_two_things_gets_a_passage_for_each(kb: KnowledgeService) -> None:
    doc = ("# Server options\n\n"
           + "The keepalive_timeout setting closes idle connections after 75 seconds by default.\n\n"
           + filler("logging", 30)
           + "The client_max_body_size setting rejects larger uploads with error 413.\n\n"
           + filler("caching", 30))
    assert len(doc) > 2 * HIT_BYTES
    await kb.index_text(label="server", name="server.md", text=doc)
    await kb.index_text(label="other", name="other.md", text=(
        "# Tuning\n\nSee keepalive_timeout in the server options before tuning workers.\n"))
    reply = await kb.search(["keepalive_timeout versus client_max_body_size"], session_id="s", limit=2)
    assert "closes idle connections after 75 seconds" in reply.text
    assert "rejects larger uploads with error 413" in reply.text
    assert len(reply.text.encode()) < 3000


async def test_an_error_message_finds_the_page_of_the_program_it_names(kb: KnowledgeService) -> None:
    # findmnt's page holds more of the message's words; umount's is the one that explains it.
    await kb.index_text(label="8/findmnt.8.txt", name="findmnt.8.txt", text=(
        "FINDMNT(8)    System Administration    FINDMNT(8)\n\nEXAMPLES\n"
        "       findmnt --target /mnt/data\n              prints the target mount of /mnt/data\n\n"
        "       findmnt --poll --target /mnt/data\n              monitors the data target; busy targets show\n\n"
        "OPTIONS\n       -T, --target path\n              the target is the mount point of path\n"))
    await kb.index_text(label="8/umount.8.txt", name="umount.8.txt", text=(
        "UMOUNT(8)    System Administration    UMOUNT(8)\n\nDESCRIPTION\n"
        "       Note that a filesystem cannot be unmounted when it is 'busy' - for example, when there are\n"
        "       open files on it.\n\nOPTIONS\n       -l, --lazy\n              Lazy unmount.\n\n"
        "       -f, --force\n              Force an unmount.\n"))
    reply = await kb.search(["umount: /mnt/data: target is busy."], session_id="s", limit=2)
    first = reply.text.split("### ", 2)[1]
    assert "source: 8/umount.8.txt" in first.splitlines()[0], reply.text


async def test_a_long_section_is_cut_to_its_best_passage_when_other_hits_share_the_reply(
        kb: KnowledgeService) -> None:
    for n in range(2):
        await kb.index_text(label=f"guide{n}", name=f"guide{n}.md", text=(
            f"# Retries {n}\n\n" + filler("transport", 40) + "Retries back off exponentially up to 30 seconds.\n\n"
            + filler("pooling", 40)))
    reply = await kb.search(["how long do retries back off"], session_id="s", limit=2)
    assert reply.text.count("Retries back off exponentially up to 30 seconds.") == 2
    assert len(reply.text.encode()) <= 2 * (HIT_BYTES + 300)
