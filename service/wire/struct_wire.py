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
from collections.abc import Mapping, Sequence
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


# One-byte lengths, and a field's tag with its one-byte length: most fields are short, and a
# table lookup and one concatenation cost less than formatting or building bytes per field.
_BYTE = tuple(bytes((n,)) for n in range(0x80))
_KEY1 = tuple(_KEY + b for b in _BYTE)
_VALUE1 = tuple(_VALUE + b for b in _BYTE)
_ENTRY1 = tuple(_ENTRY + b for b in _BYTE)
_STRING1 = tuple(_STRING + b for b in _BYTE)
_ITEM1 = tuple(_ITEM + b for b in _BYTE)
_KEYS: dict[str, bytes] = {}
"""A key's encoded field (tag, length, UTF-8), by key: data repeats a few keys in every row."""
_MAX_KEYS = 4096


def varint(n: int) -> bytes:
    """A non-negative integer as a protobuf varint."""
    if n < 0x80:
        return _BYTE[n]
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


def delimited_parts(tag_bytes: bytes, parts: Sequence[bytes]) -> tuple[bytes, ...]:
    """`delimited(tag_bytes, b"".join(parts))` as parts, to be joined once with their message.

    Each `+` of a message's parts copies all of them again; a page of output went through a
    dozen copies on its way to the wire.
    """
    return (tag_bytes, varint(sum(map(len, parts))), *parts)


def struct_bytes(data: Mapping[str, Any]) -> bytes:
    """The serialized Struct of JSON-like `data`; values JSON cannot hold become strings."""
    return _struct_body(data, 0)


# The encoder is the hot part of every applied call's answer (a page of log lines is a few
# hundred values): strings, the commonest values, are encoded where they are met rather than
# through `_value`, and every length below 128 is a table lookup. `_value` states the rules.


def _struct_body(data: Mapping[Any, Any], depth: int) -> bytes:
    parts: list[bytes] = []
    append = parts.append
    inline = depth < _MAX_DEPTH  # the values are at depth + 1: not yet too deep
    for key, value in data.items():
        field = _KEYS.get(key) if type(key) is str else None
        if field is None:
            field = _key_field(key)
        if inline and type(value) is str:
            raw = value.encode("utf-8", "replace")
            n = len(raw)
            body = (_STRING1[n] if n < 0x80 else _STRING + varint(n)) + raw
        else:
            body = _value(value, depth + 1)
        m = len(body)
        if m < 0x80:
            entry = field + _VALUE1[m] + body
            n = len(entry)
            append((_ENTRY1[n] if n < 0x80 else _ENTRY + varint(n)) + entry)
        else:
            # A long value (a page of lines) is copied once, by the join, not per prefix.
            head = field + _VALUE + varint(m)
            parts += (_ENTRY + varint(len(head) + m), head, body)
    return b"".join(parts)


def _key_field(key: Any) -> bytes:
    name = (key if type(key) is str else str(key)).encode("utf-8", "replace")
    n = len(name)
    field = (_KEY1[n] if n < 0x80 else _KEY + varint(n)) + name
    if type(key) is str and len(_KEYS) < _MAX_KEYS:
        _KEYS[key] = field
    return field


def _value(value: Any, depth: int) -> bytes:
    # Too deep, or not JSON (a set is sorted first, a tuple is a list): its str().
    if depth > _MAX_DEPTH:
        return _string(str(value))
    kind = type(value)
    if kind is str:  # most values
        return _string(value)
    if kind is dict:  # before the Mapping check below, which is slow for a plain dict
        body = _struct_body(value, depth)
        return _STRUCT + varint(len(body)) + body
    if kind is list:
        body = _list_body(value, depth)
        return _LIST + varint(len(body)) + body
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
        return delimited(_LIST, _list_body(items, depth))
    return _string(str(value))


def _list_body(items: Any, depth: int) -> bytes:
    parts: list[bytes] = []
    append = parts.append
    inline = depth < _MAX_DEPTH  # the items are at depth + 1
    for item in items:
        if inline and type(item) is str:
            raw = item.encode("utf-8", "replace")
            n = len(raw)
            body = (_STRING1[n] if n < 0x80 else _STRING + varint(n)) + raw
        else:
            body = _value(item, depth + 1)
        m = len(body)
        if m < 0x80:
            append(_ITEM1[m] + body)
        else:
            parts += (_ITEM + varint(m), body)
    return b"".join(parts)


def _string(text: str) -> bytes:
    # A lone surrogate cannot go out as UTF-8: it goes as U+FFFD rather than failing the call.
    raw = text.encode("utf-8", "replace")
    n = len(raw)
    return (_STRING1[n] if n < 0x80 else _STRING + varint(n)) + raw
