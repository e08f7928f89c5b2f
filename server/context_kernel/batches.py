"""How many items one batch call may carry and run at once (ctx_batch_execute, ctx_fetch_and_index)."""

from __future__ import annotations

from .errors import InvalidRequest

MAX_CONCURRENCY = 8


def check_batch(count: int, limit: int, concurrency: int, *, noun: str, example: str) -> None:
    """Refuse an empty or oversized batch, or a concurrency outside 1..8, saying what to pass."""
    if count == 0:
        raise InvalidRequest(f"no {noun} given", hint=f"pass {example}")
    if count > limit:
        raise InvalidRequest(f"{count} {noun} is more than {limit} in one call", hint="split the batch")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise InvalidRequest(f"concurrency must be 1..{MAX_CONCURRENCY}, not {concurrency}")
