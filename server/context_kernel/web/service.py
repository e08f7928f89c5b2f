"""ctx_fetch_and_index: fetch once, convert, index, and answer with a short preview.

Pages are cached by label: within the TTL a second fetch answers from the index and says how
old it is; `force` or `ttl=0` refetches and replaces the old chunks. A different URL fetched
under a label already in use replaces what was there, and the reply names what it replaced.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio

from ..activity import doing
from ..batches import check_batch
from ..errors import ContextKernelError, InvalidRequest
from ..knowledge.service import KnowledgeService
from ..metering import count
from ..security.call_guard import DenyGuard
from ..security.redact import redact_text, url_without_credentials, urls_cleaned
from .client import SafeFetcher
from .convert import convert
from .outcomes import FetchOutcome, FetchReply, FetchRequest, preview, render_many, render_one

DEFAULT_TTL_S = 24 * 3600
KEEP_FETCHED_S = 14 * 24 * 3600
MAX_URLS = 50


class FetchService:
    def __init__(self, *, knowledge: KnowledgeService, fetcher: SafeFetcher, clock: Callable[[], float] = time.time,
                 guard: DenyGuard | None = None) -> None:
        self._guard = guard
        self._knowledge = knowledge
        self._fetcher = fetcher
        self._clock = clock

    async def remove_stale(self) -> int:
        """Server start calls this: fetched content older than 14 days goes."""
        return await self._knowledge.remove_older_than(self._clock() - KEEP_FETCHED_S, "fetch")

    async def fetch(self, *, url: str | None, requests: list[FetchRequest] | None, session_id: str | None,
                    source: str | None = None, ttl_s: float | None = None, force: bool = False,
                    concurrency: int = 1) -> FetchReply:
        """ctx_fetch_and_index: one URL (its outcome is the reply) or a batch (one line per URL)."""
        if (url is None) == (requests is None):
            raise InvalidRequest("give exactly one of url or requests", hint="url= for one page, "
                                 "requests=[{url, source?}, ...] for several")
        items = [FetchRequest(url, source)] if url is not None else list(requests or [])
        outcomes = await self.fetch_many(items, session_id=session_id, ttl_s=ttl_s, force=force,
                                         concurrency=concurrency)
        if url is not None:
            return FetchReply(render_one(outcomes[0]), outcomes[0].status == "error")
        text, all_failed = render_many(outcomes)
        return FetchReply(text, all_failed)

    async def fetch_many(self, requests: list[FetchRequest], *, session_id: str | None, ttl_s: float | None = None,
                         force: bool = False, concurrency: int = 1,
                         on_done: Callable[[FetchOutcome], None] | None = None) -> list[FetchOutcome]:
        check_batch(len(requests), MAX_URLS, concurrency, noun="URLs", example="url, or requests=[{url, source?}, ...]")
        results: list[FetchOutcome | None] = [None] * len(requests)
        limiter = anyio.Semaphore(concurrency)

        async def one(i: int, req: FetchRequest) -> None:
            async with limiter:
                outcome = results[i] = await self.fetch_one(req, session_id=session_id, ttl_s=ttl_s, force=force)
                if on_done is not None:
                    on_done(outcome)

        async with anyio.create_task_group() as tg:
            for i, req in enumerate(requests):
                tg.start_soon(one, i, req)
        return [r for r in results if r is not None]

    async def fetch_one(self, req: FetchRequest, *, session_id: str | None, ttl_s: float | None = None,
                        force: bool = False) -> FetchOutcome:
        # Credentials in the URL (userinfo, `?api_key=…`, a signed URL's signature) are for the request
        # only: label, origin, links and replies go without.
        shown = await anyio.to_thread.run_sync(url_without_credentials, req.url)
        label = req.source or shown
        ttl = DEFAULT_TTL_S if ttl_s is None else ttl_s
        cached = await self._knowledge.cached_source(label)
        fresh_enough = not force and ttl > 0
        if fresh_enough and cached is not None and cached.kind == "fetch" and cached.origin == shown:
            age = self._clock() - cached.indexed_at
            if age < ttl:
                return FetchOutcome(shown, label, "cached", cached, age_s=age)
        doing(f"fetching {shown}")
        try:
            got = await self._fetcher.fetch(req.url, self._guard.check_url if self._guard else None)
            doing(f"converting and indexing {shown} ({len(got.body) / 1024:,.0f} KB)")
            base = await anyio.to_thread.run_sync(url_without_credentials, got.final_url)
            converted = await anyio.to_thread.run_sync(convert, got.body, got.content_type, base)
        except ContextKernelError as exc:  # refused, failed or binary (UnsupportedContent): this URL's outcome
            # Our message stays as we wrote it; only the addresses it quotes lose their credentials.
            return FetchOutcome(shown, label, "error", error=await anyio.to_thread.run_sync(urls_cleaned, str(exc)))
        row = await self._knowledge.index_text(label=label, text=converted.text, name=converted.name, kind="fetch",
                                               origin=shown, session_id=session_id)
        # The page's "in" is its body, per tool and per source alike (the index holds its converted text).
        count(bytes_in=len(got.body), source=label, source_extra=len(got.body) - row.bytes)
        # Another page (or other content) under the same label is gone now: the reply must say so.
        replaced = "" if cached is None or cached.origin == shown else (cached.origin or f"{cached.kind} content")
        shown_preview = await anyio.to_thread.run_sync(redact_text, preview(converted.text))
        return FetchOutcome(shown, label, "new", row, fetched_bytes=len(got.body), kind=converted.kind,
                            preview=shown_preview, replaced=replaced)
