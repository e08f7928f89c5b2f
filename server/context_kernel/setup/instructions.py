"""The routing text for the agent, kept between markers in CLAUDE.md / GEMINI.md / AGENTS.md / … .

Only the marked block is ours: setup adds it (or brings it up to date), uninstall removes it, and
the rest of the file is left byte for byte.
"""

from __future__ import annotations

START = "<!-- context-kernel:start -->"
END = "<!-- context-kernel:end -->"

# Under 1 KB on purpose: it is read at the start of every session.
ROUTING = """\
## context-kernel

The `context-kernel` MCP server runs code in warm kernels next to the data and returns only what
the code prints, so raw output stays out of this conversation.

- Anything that produces output (tests, builds, logs, data files, git history, API calls): use
  `ctx_execute` (language + code), `ctx_execute_file` (process a file without reading it in), or
  `ctx_batch_execute` (several commands and searches in one call). Print only what you need.
- Web pages and docs: `ctx_fetch_and_index` instead of fetching pages, then `ctx_search`.
- Looking up indexed docs or earlier output: `ctx_search`.
- Sharing the session: `ctx_export` writes it as Jupyter notebooks.

Reading a file you are about to edit, and short commands, are fine as usual.
"""

BLOCK = f"{START}\n{ROUTING}{END}\n"


def _find(text: str) -> tuple[int, int] | None:
    """Start and end offsets of our block (end includes the newline after the end marker)."""
    start = text.find(START)
    if start < 0:
        return None
    end = text.find(END, start)
    if end < 0:
        return None
    end += len(END)
    if text.startswith("\n", end):
        end += 1
    return start, end


def upsert_block(text: str | None, preamble: str = "") -> str:
    """The file with our block present and current: replaced in place, else appended after a blank line."""
    if text is None:
        return preamble + ("\n" if preamble else "") + BLOCK
    found = _find(text)
    if found:
        start, end = found
        return text[:start] + BLOCK + text[end:]
    if not text.strip():
        return BLOCK
    base = text if text.endswith("\n") else text + "\n"
    return base + "\n" + BLOCK


def remove_block(text: str) -> str:
    """The file without our block, and without the blank line that `upsert_block` put before it."""
    found = _find(text)
    if not found:
        return text
    start, end = found
    before, after = text[:start], text[end:]
    if not after.strip():
        return before.rstrip("\n") + "\n" if before.strip() else before.rstrip("\n")
    if before.endswith("\n\n") and after.startswith("\n"):
        after = after[1:]
    return before + after


def has_block(text: str) -> bool:
    return _find(text) is not None


def only_boilerplate(text: str, preamble: str = "") -> bool:
    """Nothing left but what we would write into a new file (so uninstall may delete it)."""
    return not text.strip() or text.strip() == preamble.strip()
