"""Our wire format (jupyter_wire.py) against jupyter_client's Session, in both directions."""

from __future__ import annotations

import json

import pytest
from jupyter_client.session import Session

from context_kernel.kernel_processes.jupyter_wire import Wire, WireError

KEY = b"a-secret-key"


@pytest.mark.parametrize("key", [KEY, b""])
def test_a_session_message_parses_with_its_idents_and_parts(key: bytes) -> None:
    session = Session(key=key)
    msg = session.msg("execute_request", {"code": "echo é", "silent": False}, metadata={"m": 1})
    parsed = Wire(key).parse(session.serialize(msg, ident=[b"client-1"]))
    assert parsed.idents == [b"client-1"]
    assert parsed.msg_type == "execute_request"
    assert parsed.header["msg_id"] == msg["header"]["msg_id"]
    assert parsed.content == {"code": "echo é", "silent": False}
    assert parsed.metadata == {"m": 1}


@pytest.mark.parametrize("scheme", ["hmac-sha256", "hmac-sha512"])
def test_our_message_deserialises_in_a_session_with_the_same_key(scheme: str) -> None:
    session = Session(key=KEY, signature_scheme=scheme)
    # a kernel's parent header is what it parsed: JSON, its date a string
    parent = json.loads(json.dumps(session.msg("execute_request", {"code": "x"}), default=str))
    wire = Wire(KEY, scheme)
    frames = wire.serialize("stream", {"name": "stdout", "text": "hi ✓\n"}, parent["header"],
                           idents=[b"kernel.topic"])
    idents, rest = session.feed_identities(frames)
    msg = session.deserialize(rest)  # checks the signature
    assert idents == [b"kernel.topic"]
    assert msg["msg_type"] == "stream"
    assert msg["content"] == {"name": "stdout", "text": "hi ✓\n"}
    assert msg["parent_header"]["msg_id"] == parent["header"]["msg_id"]
    assert msg["header"]["version"] == "5.3" and msg["header"]["date"].tzinfo is not None


def test_a_tampered_message_is_refused() -> None:
    session = Session(key=KEY)
    frames = session.serialize(session.msg("execute_request", {"code": "true"}))
    frames[-1] = b'{"code": "rm -rf ~"}'
    with pytest.raises(WireError, match="signature"):
        Wire(KEY).parse(frames)


def test_a_message_signed_with_another_key_is_refused() -> None:
    session = Session(key=b"another-key")
    with pytest.raises(WireError, match="signature"):
        Wire(KEY).parse(session.serialize(session.msg("kernel_info_request", {})))


def test_a_replayed_message_is_refused() -> None:
    session = Session(key=KEY)
    frames = session.serialize(session.msg("execute_request", {"code": "true"}))
    wire = Wire(KEY)
    wire.parse(frames)
    with pytest.raises(WireError, match="replayed"):
        wire.parse(frames)


def test_frames_without_a_delimiter_are_refused() -> None:
    with pytest.raises(WireError, match="delimiter"):
        Wire(KEY).parse([b"just", b"frames"])
