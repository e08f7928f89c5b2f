"""The Jupyter messaging protocol's wire format (5.3), signed and parsed without jupyter_client.

A message on a socket is ``[*idents, b"<IDS|MSG>", signature, header, parent_header, metadata,
content, *buffers]``; the signature is the hex HMAC of the four JSON frames under the key and
scheme of the connection file. jupyter_client's Session does the same, but importing it costs a
kernel ~0.2 s of startup (the jupyter_client package imports its managers and clients); the
tests check this module against Session in both directions.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

DELIM = b"<IDS|MSG>"
PROTOCOL_VERSION = "5.3"
REPLAY_MEMORY = 1 << 16  # signatures remembered to refuse a replayed message (as Session does)


class WireError(ValueError):
    """A message that is malformed, unsigned or wrongly signed, or a replay."""


@dataclass
class Message:
    """One received message; idents route the reply back to its sender."""

    idents: list[bytes]
    header: dict[str, Any]
    parent_header: dict[str, Any]
    metadata: dict[str, Any]
    content: dict[str, Any]
    buffers: list[bytes] = field(default_factory=list)

    @property
    def msg_type(self) -> str:
        return str(self.header.get("msg_type", ""))


def now_iso() -> str:
    """The current UTC time as jupyter_client writes it."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _pack(obj: Any) -> bytes:
    # as jupyter_client's json_packer: text stays UTF-8, lone surrogates pass through
    return json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogateescape")


class Wire:
    """Signs and serialises outgoing messages, verifies and parses incoming ones, for one kernel."""

    def __init__(self, key: bytes, signature_scheme: str = "hmac-sha256", username: str = "kernel") -> None:
        scheme, _, digest = signature_scheme.partition("-")
        if scheme != "hmac" or not digest:
            raise WireError(f"unsupported signature scheme {signature_scheme!r}")
        self._key = key
        self._digest = getattr(hashlib, digest)
        self._username = username
        self.session = os.urandom(16).hex()
        self._count = 0
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self.last_msg_id = ""
        """The msg_id of the newest header made (what a sender matches replies against)."""

    def _sign(self, frames: list[bytes]) -> bytes:
        if not self._key:
            return b""
        mac = hmac.new(self._key, digestmod=self._digest)
        for frame in frames:
            mac.update(frame)
        return mac.hexdigest().encode()

    def header(self, msg_type: str) -> dict[str, Any]:
        self._count += 1
        self.last_msg_id = f"{self.session}_{os.getpid()}_{self._count}"
        return {
            "msg_id": self.last_msg_id,
            "msg_type": msg_type,
            "username": self._username,
            "session": self.session,
            "date": now_iso(),
            "version": PROTOCOL_VERSION,
        }

    def serialize(
        self,
        msg_type: str,
        content: dict[str, Any],
        parent_header: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        idents: list[bytes] | None = None,
    ) -> list[bytes]:
        """The frames of a new message (its header made here)."""
        frames = [
            _pack(self.header(msg_type)),
            _pack(parent_header or {}),
            _pack(metadata or {}),
            _pack(content),
        ]
        return [*(idents or []), DELIM, self._sign(frames), *frames]

    def parse(self, raw: list[bytes]) -> Message:
        """The message in raw frames; WireError if it is malformed, badly signed or a replay."""
        try:
            at = raw.index(DELIM)
        except ValueError:
            raise WireError("no <IDS|MSG> delimiter") from None
        if len(raw) < at + 6:
            raise WireError("too few frames")
        signature, frames = raw[at + 1], raw[at + 2 : at + 6]
        if self._key:
            if not hmac.compare_digest(signature, self._sign(frames)):
                raise WireError("bad signature")
            if signature in self._seen:
                raise WireError("replayed message")
            self._seen[signature] = None
            if len(self._seen) > REPLAY_MEMORY:
                self._seen.popitem(last=False)
        try:
            # as Session does: bytes that are not UTF-8 become U+FFFD rather than fail the message
            header, parent, metadata, content = (json.loads(f.decode("utf-8", "replace")) for f in frames)
        except ValueError as exc:
            raise WireError(f"a frame is not JSON: {exc}") from None
        if not all(isinstance(part, dict) for part in (header, parent, metadata, content)):
            raise WireError("a frame is not a JSON object")
        return Message(raw[:at], header, parent, metadata, content, raw[at + 6 :])
