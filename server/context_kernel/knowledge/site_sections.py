"""Sections repeated across the pages of one site are stored once: with the first page that had them.

After the converter has dropped what is marked as chrome, documentation sites still repeat whole
sections on every page: rustdoc lists the same blanket implementations (`impl<T> Any for T`, `impl<T>
From<T> for T`, …) under every type, generators repeat a footer or a "found a bug?" box that is not
marked up as one. Each copy was a section of its own, and a search for `From` or `Any` got the copy of
whichever page ranked first. Here a fetched page's section whose text (its heading line aside) an
earlier page of the same site already holds is left out; the page's first section always stays.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from urllib.parse import urlsplit

from .model import Chunk

MIN_BODY = 40  # a repeated "Read more" is not worth a lookup
MAX_SITES = 64
MAX_PER_SITE = 50_000


def site_of(url: str | None) -> str | None:
    if not url or not url.startswith(("http://", "https://")):
        return None
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.lower()}"


def _body_key(chunk: Chunk) -> str | None:
    body = chunk.content.partition("\n")[2] if chunk.content.lstrip().startswith("#") else chunk.content
    body = " ".join(body.split())
    return hashlib.sha1(body.encode("utf-8", "replace")).hexdigest() if len(body) >= MIN_BODY else None


class SiteSections:
    """Per site: which page first held each section text (in memory, bounded; used from worker threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sites: OrderedDict[str, dict[str, str]] = OrderedDict()

    def first_copies(self, url: str | None, label: str, chunks: list[Chunk]) -> list[Chunk]:
        """The page's chunks without those an earlier page of its site already holds."""
        site = site_of(url)
        if site is None or not chunks:
            return chunks
        with self._lock:
            seen = self._sites.setdefault(site, {})
            self._sites.move_to_end(site)
            while len(self._sites) > MAX_SITES:
                self._sites.popitem(last=False)
            kept = [chunks[0]]
            for chunk in chunks[1:]:
                key = _body_key(chunk)
                holder = seen.get(key) if key else None
                if holder is not None and holder != label:
                    continue
                if key and len(seen) < MAX_PER_SITE:
                    seen.setdefault(key, label)
                kept.append(chunk)
            first = _body_key(chunks[0])
            if first and len(seen) < MAX_PER_SITE:
                seen.setdefault(first, label)
        return kept
