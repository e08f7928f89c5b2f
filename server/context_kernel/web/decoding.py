"""Content-Encoding decoders that never produce more than the body cap.

httpx's own decoders inflate a whole network chunk at once: one 64 KB chunk of a gzip bomb
becomes ~64 MB in memory before any cap could be checked, and brotli goes far beyond that.
These decoders ask zlib and brotli for at most `limit + 1` bytes per call, so the cap is
checked on decoded bytes and memory stays bounded by the cap whatever the compression ratio.
"""

from __future__ import annotations

import zlib
from typing import Protocol

try:  # brotli is optional: without it we do not advertise "br" and refuse it if sent anyway
    import brotli
except ImportError:  # pragma: no cover - the project installs brotli
    brotli = None


class BodyTooLarge(Exception):
    """Internal: a decoding stage produced more than its budget. The client maps it to FetchTooLarge."""

    def __init__(self, produced: int) -> None:
        super().__init__(produced)
        self.produced = produced


class UnsupportedEncoding(Exception):
    """Internal: a Content-Encoding we did not ask for and cannot decode."""


class DecodeFailed(Exception):
    """Internal: the compressed stream is corrupt."""


class _Stage(Protocol):
    def decode(self, data: bytes, max_out: int) -> bytes:
        """Decode `data` whole, returning at most `max_out` bytes (more means over budget)."""
        ...


def accept_encoding() -> str:
    """The Accept-Encoding header we send: only what `BoundedDecoder` can decode with a bound."""
    return "gzip, deflate, br" if brotli is not None else "gzip, deflate"


class BoundedDecoder:
    """Decodes a body through its Content-Encoding chain, each stage capped at `limit` bytes.

    Every stage is capped, not only the last: a compressed intermediate larger than the cap
    means the page is over the cap in practice, and capping it keeps a bomb in the outer
    encoding from inflating in memory.
    """

    def __init__(self, content_encoding: str, *, limit: int) -> None:
        names = [n.strip().lower() for n in content_encoding.split(",") if n.strip()]
        # Encodings are listed in the order they were applied; undo them in reverse.
        self._stages = [_stage(name) for name in reversed(names) if name != "identity"]
        self._limit = limit
        self._produced = [0] * len(self._stages)

    def decode(self, data: bytes) -> bytes:
        """Decode one raw chunk; raise BodyTooLarge as soon as any stage passes the limit."""
        for i, stage in enumerate(self._stages):
            budget = self._limit - self._produced[i]
            # Asking for budget + 1 tells "exactly at the cap" apart from "over it" in one call;
            # when a stage returns less than asked, it has consumed all its input.
            data = stage.decode(data, budget + 1)
            self._produced[i] += len(data)
            if len(data) > budget:
                raise BodyTooLarge(self._produced[i])
        return data


def _stage(name: str) -> _Stage:
    if name in ("gzip", "x-gzip"):
        return _Zlib(zlib.MAX_WBITS | 16)
    if name == "deflate":
        return _Deflate()
    if name == "br" and brotli is not None:
        return _Brotli()
    raise UnsupportedEncoding(name)


class _Zlib:
    def __init__(self, wbits: int) -> None:
        self._z = zlib.decompressobj(wbits)

    def decode(self, data: bytes, max_out: int) -> bytes:
        try:
            return self._z.decompress(data, max_out)
        except zlib.error as exc:
            raise DecodeFailed(str(exc)) from exc


class _Deflate:
    """HTTP "deflate" is meant to be zlib-wrapped, but some servers send raw deflate."""

    def __init__(self) -> None:
        self._z = zlib.decompressobj()
        self._first = True

    def decode(self, data: bytes, max_out: int) -> bytes:
        try:
            out = self._z.decompress(data, max_out)
        except zlib.error as exc:
            if not self._first:
                raise DecodeFailed(str(exc)) from exc
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)
            try:
                out = self._z.decompress(data, max_out)
            except zlib.error as raw_exc:
                raise DecodeFailed(str(raw_exc)) from raw_exc
        self._first = False
        return out


class _Brotli:
    # Brotli's output buffer overshoots `output_buffer_limit` (it grows by doubling), so ask in
    # small steps: memory stays within one step of the budget whatever the ratio.
    STEP = 256 * 1024

    def __init__(self) -> None:
        self._d = brotli.Decompressor()

    def decode(self, data: bytes, max_out: int) -> bytes:
        step = min(max_out, self.STEP)
        try:
            parts = [self._d.process(data, output_buffer_limit=step)]
            total = len(parts[0])
            # Until it can take input again, the decompressor holds output for empty calls.
            while total < max_out and not self._d.can_accept_more_data():
                parts.append(self._d.process(b"", output_buffer_limit=step))
                total += len(parts[-1])
        except brotli.error as exc:
            raise DecodeFailed(str(exc)) from exc
        return b"".join(parts)[:max_out]
