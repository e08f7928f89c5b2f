"""What the server publishes to clients besides tool replies: its exports and the insight page.

Each notebook and HTML page in the export directory (`ctx_export` without a path, `context-kernel
export`) is `context-kernel://exports/<file name>`, and the page `ctx_insight` writes is
`context-kernel://insight`, listed when they exist and read from disk when asked. Exports written
elsewhere (`ctx_export(path=…)`, inside the project) are the project's files and are not listed.
The MCP layer offers them as resources (tools/offerings.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio

from ..errors import InvalidRequest

SCHEME = "context-kernel://"
EXPORTS = f"{SCHEME}exports/"
INSIGHT = f"{SCHEME}insight"
MIME_TYPES = {".ipynb": "application/x-ipynb+json", ".html": "text/html"}


@dataclass(frozen=True)
class PublishedFile:
    uri: str
    name: str
    title: str
    description: str | None
    mime_type: str
    size: int


@dataclass(frozen=True)
class Published:
    export_dir: Path
    insight_page: Path

    @staticmethod
    def owns(uri: str) -> bool:
        return uri.startswith(SCHEME)

    async def files(self) -> list[PublishedFile]:
        return await anyio.to_thread.run_sync(self._files)  # a directory listing: not on the event loop

    async def read(self, uri: str) -> tuple[str, str]:
        """The text of the published file `uri` and its MIME type."""
        return await anyio.to_thread.run_sync(self._read, uri)

    def _files(self) -> list[PublishedFile]:
        found = []
        if self.insight_page.is_file():
            found.append(PublishedFile(INSIGHT, "insight", "Sessions (ctx_insight page)",
                                       "Every recorded session with its calls and exported notebooks", "text/html",
                                       self.insight_page.stat().st_size))
        for path in self._exports():
            found.append(PublishedFile(EXPORTS + path.name, path.name, f"Exported {path.name}", None,
                                       MIME_TYPES[path.suffix], path.stat().st_size))
        return found

    def _exports(self) -> list[Path]:
        try:
            return sorted(p for p in self.export_dir.iterdir() if p.suffix in MIME_TYPES and p.is_file())
        except OSError:
            return []  # nothing exported yet

    def _read(self, uri: str) -> tuple[str, str]:
        path: Path | None
        if uri == INSIGHT:
            path = self.insight_page
        else:
            # Only a file listed in the export directory: a name, never a path out of it.
            by_name = {p.name: p for p in self._exports()}
            path = by_name.get(uri.removeprefix(EXPORTS)) if uri.startswith(EXPORTS) else None
        if path is None or not path.is_file():
            raise InvalidRequest(f"no resource {uri}",
                                 hint="resources/list names the exports and the insight page there are now")
        return path.read_text(encoding="utf-8"), MIME_TYPES.get(path.suffix, "text/html")
