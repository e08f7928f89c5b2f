"""Deterministic filler prose: documentation-like sentences from a fixed vocabulary and a seeded RNG."""

from __future__ import annotations

import random

SUBJECTS = ["The client", "Each worker", "The connection pool", "A request", "The scheduler", "This option",
            "The cache layer", "Every handler", "The retry policy", "The exporter", "A session", "The parser"]
VERBS = ["keeps", "reuses", "validates", "buffers", "forwards", "records", "limits", "retries", "serialises",
         "rotates", "drops", "batches", "compresses", "resolves"]
OBJECTS = ["open connections", "pending writes", "the response headers", "idle sockets", "trace spans",
           "queued jobs", "partial chunks", "configuration values", "stale entries", "the request body",
           "authentication tokens", "metrics samples"]
TAILS = ["until the deadline passes", "when the server asks for it", "on every reconnect",
         "before the next flush", "unless it is disabled", "for the lifetime of the process",
         "in the order they arrive", "as long as memory allows", "after a successful handshake",
         "between two health checks"]


def sentence(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}."


def paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(sentence(rng) for _ in range(sentences))
