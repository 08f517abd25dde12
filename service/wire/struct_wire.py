"""google.protobuf.Struct wire bytes written straight from JSON data, and length-delimited fields.

A tool's structured output goes out as a Struct on every applied call. Building the Struct
message first (`Struct.update`) walks the data in Python and creates a message per value, which
cost more than the simulator's whole call for a page of log lines; the wire format is simple
enough to write directly. It is the service's one encoder of JSON data: `convert.dict_to_struct`
parses these bytes when it needs a message (a test holds them to protobuf's own Struct of the
same data). Messages can then be assembled from serialized parts: protobuf parsers read
concatenated fields as one message.
"""

from __future__ import annotations

import math
import struct as _struct
from collections.abc import Mapping
from typing import Any

_DOUBLE = _struct.Struct("<d").pack
_MAX_DEPTH = 32

# Tags (field number << 3 | wire type) of Struct, Value and ListValue fields.
_ENTRY = b"\x0a"  # Struct.fields (map entry, length-delimited)
_KEY = b"\x0a"  # entry key
_VALUE = b"\x12"  # entry value
_NULL = b"\x08\x00"  # Value.null_value = NULL_VALUE
_NUMBER = b"\x11"  # Value.number_value (64-bit)
_STRING = b"\x1a"  # Value.string_value
_TRUE = b"\x20\x01"  # Value.bool_value
_FALSE = b"\x20\x00"
_STRUCT = b"\x2a"  # Value.struct_value
_LIST = b"\x32"  # Value.list_value
_ITEM = b"\x0a"  # ListValue.values


def varint(n: int) -> bytes:
    """A non-negative integer as a protobuf varint."""
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def tag(number: int) -> bytes:
    """The tag of length-delimited field `number` (strings, bytes, messages)."""
    return varint(number << 3 | 2)


def delimited(tag_bytes: bytes, payload: bytes) -> bytes:
    """One length-delimited field: its tag, the payload's length, the payload."""
    return tag_bytes + varint(len(payload)) + payload


def struct_bytes(data: Mapping[str, Any]) -> bytes:
    """The serialized Struct of JSON-like `data`; values JSON cannot hold become strings."""
    return _struct_body(data, 0)


def _struct_body(data: Mapping[Any, Any], depth: int) -> bytes:
    parts: list[bytes] = []
    for key, value in data.items():
        name = (key if type(key) is str else str(key)).encode("utf-8", "replace")
        body = _value(value, depth + 1)
        n, m = len(name), len(body)
        if n + m < 0x7C:  # the common case: every length fits in one byte
            parts.append(b"\x0a%c\x0a%c%b\x12%c%b" % (n + m + 4, n, name, m, body))
        else:
            parts.append(delimited(_ENTRY, delimited(_KEY, name) + delimited(_VALUE, body)))
    return b"".join(parts)


def _value(value: Any, depth: int) -> bytes:
    # Too deep, or not JSON (a set is sorted first, a tuple is a list): its str().
    if depth > _MAX_DEPTH:
        return _string(str(value))
    if type(value) is str:  # most values
        return _string(value)
    if value is None:
        return _NULL
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int | float):
        number = float(value)
        return _NUMBER + _DOUBLE(number) if math.isfinite(number) else _string(str(value))
    if isinstance(value, Mapping):
        return delimited(_STRUCT, _struct_body(value, depth))
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        body = b"".join(delimited(_ITEM, _value(item, depth + 1)) for item in items)
        return delimited(_LIST, body)
    return _string(str(value))


def _string(text: str) -> bytes:
    # A lone surrogate cannot go out as UTF-8: it goes as U+FFFD rather than failing the call.
    raw = text.encode("utf-8", "replace")
    n = len(raw)
    return b"\x1a%c%b" % (n, raw) if n < 0x80 else _STRING + varint(n) + raw
