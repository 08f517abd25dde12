"""The call id of a Connect request that is refused unread (too large, or not parseable).

agent.proto promises every call an answer naming its `call_id`, and a client waits for that
answer. A request over the message limit is refused before it is parsed, so its id is read here
from the raw bytes instead: a walk over the protobuf wire format that skips every field but the
path to `ConnectRequest.call.call_id` (a large `args` is skipped by its length, not read).
"""

from __future__ import annotations

from metasre.v1 import agent_pb2

_CALL = agent_pb2.ConnectRequest.DESCRIPTOR.fields_by_name["call"].number
_CALL_ID = agent_pb2.ToolCall.DESCRIPTOR.fields_by_name["call_id"].number
_ONEOF = frozenset(f.number for f in agent_pb2.ConnectRequest.DESCRIPTOR.oneofs[0].fields)
_LENGTH_DELIMITED = 2


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    """The varint at `at` and the offset after it; ValueError when cut short or too long."""
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _fields(data: memoryview) -> list[tuple[int, int, int, int]]:
    """Each field of one message: (number, wire type, start, end of its value)."""
    out: list[tuple[int, int, int, int]] = []
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, kind = key >> 3, key & 7
        if kind == 0:
            _, end = _varint(data, at)
        elif kind == 1:
            end = at + 8
        elif kind == _LENGTH_DELIMITED:
            size, at = _varint(data, at)
            end = at + size
        elif kind == 5:
            end = at + 4
        else:  # groups, or not protobuf at all
            raise ValueError(f"wire type {kind}")
        if end > len(data):
            raise ValueError("truncated field")
        out.append((number, kind, at, end))
        at = end
    return out


def call_id_in(data: bytes) -> str:
    """The `call.call_id` of the serialized ConnectRequest `data`, or "" if it holds none.

    As a parser would read it: the last of the oneof's fields decides what the request is, and
    the last `call_id` of a call wins. Bytes that are not protobuf give "".
    """
    view = memoryview(data)
    try:
        chosen = [f for f in _fields(view) if f[0] in _ONEOF]
        if not chosen or chosen[-1][0] != _CALL or chosen[-1][1] != _LENGTH_DELIMITED:
            return ""
        call_id = ""
        # a message field sent twice is merged: its call_id may come from any of the parts
        for number, kind, start, end in _fields(view):
            if number != _CALL or kind != _LENGTH_DELIMITED:
                continue
            for inner, inner_kind, s, e in _fields(view[start:end]):
                if inner == _CALL_ID and inner_kind == _LENGTH_DELIMITED:
                    call_id = bytes(view[start + s : start + e]).decode("utf-8")
        return call_id
    except (ValueError, UnicodeDecodeError):
        return ""
