"""Protobuf messages as plain data, the way `json_format.MessageToDict` gives them, faster.

The SDK hands policies plain dicts: every result carries the observation, every teammate's
call its data, every step a reward. `json_format` walks each message in generic code; on a
team rollout that was a fifth of the client's CPU. Here each message type gets its converter
built once from its descriptor, with the same output as

    MessageToDict(message, preserving_proto_field_name=True,
                  always_print_fields_with_no_presence=True)

(a test holds the two together over every message a played session sends). Types this module
does not special-case (float, the well-known types other than Struct, Value and
ListValue) go to `json_format` whole, so the output is the same for any message.
"""

from __future__ import annotations

import base64
import functools
import math
from collections.abc import Callable
from typing import Any

from google.protobuf import json_format, struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor

Convert = Callable[[Any], Any]

_INTS = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_SFIXED32,
    }
)
_LONGS = frozenset(  # JSON has no 64-bit integers: the mapping writes them as strings
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED64,
    }
)
_AS_IS = frozenset({FieldDescriptor.TYPE_BOOL, FieldDescriptor.TYPE_STRING, *_INTS})
_PLAIN_WELL_KNOWN = frozenset(
    {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"}
)


def to_dict(message: Any) -> dict[str, Any]:
    """A protobuf message as plain data, with the proto's field names."""
    result: dict[str, Any] = _converter(message.DESCRIPTOR)(message)
    return result


def struct_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as plain data (numbers as float)."""
    return {key: _value(value) for key, value in struct.fields.items()}


def _value(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "number_value":
        number = value.number_value
        if math.isfinite(number):
            return number
        return _slow(value)  # json_format refuses these; let it say so
    if kind == "struct_value":
        return struct_dict(value.struct_value)
    if kind == "list_value":
        return [_value(v) for v in value.list_value.values]
    if kind == "bool_value":
        return value.bool_value
    return None


def _list_value(values: struct_pb2.ListValue) -> list[Any]:
    return [_value(v) for v in values.values]


def _slow(message: Any) -> Any:
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


@functools.cache
def _converter(descriptor: Descriptor) -> Convert:
    name = descriptor.full_name
    if name == "google.protobuf.Struct":
        return struct_dict
    if name == "google.protobuf.Value":
        return _value
    if name == "google.protobuf.ListValue":
        return _list_value
    if name.startswith("google.protobuf."):
        return _slow
    fields = []
    for field in descriptor.fields:
        convert = _field_converter(field)
        if convert is None:
            return _slow
        fields.append((field.name, field.has_presence, convert))
    plan = tuple(fields)

    def convert_message(message: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for field_name, presence, convert in plan:
            if presence and not message.HasField(field_name):
                continue
            out[field_name] = convert(getattr(message, field_name))
        return out

    return convert_message


def _field_converter(field: FieldDescriptor) -> Convert | None:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        entry = field.message_type.fields_by_name
        key, value = _key(entry["key"]), _single(entry["value"])
        if value is None:
            return None
        return lambda m: {key(k): value(v) for k, v in m.items()}
    single = _single(field)
    if single is None:
        return None
    if field.is_repeated:
        return lambda values: [single(v) for v in values]
    return single


def _key(field: FieldDescriptor) -> Convert:
    if field.type == FieldDescriptor.TYPE_BOOL:
        return lambda k: "true" if k else "false"
    return str


def _single(field: FieldDescriptor) -> Convert | None:
    kind = field.type
    if kind in _AS_IS:
        return _same
    if kind in _LONGS:
        return str
    if kind == FieldDescriptor.TYPE_DOUBLE:
        return _double
    if kind == FieldDescriptor.TYPE_BYTES:
        return _base64
    enum_type, message_type = field.enum_type, field.message_type
    if kind == FieldDescriptor.TYPE_ENUM and enum_type is not None:
        names = {v.number: v.name for v in enum_type.values}
        if enum_type.full_name == "google.protobuf.NullValue":
            return lambda v: None
        return lambda v: names.get(v, v)
    if kind == FieldDescriptor.TYPE_MESSAGE and message_type is not None:
        name = message_type.full_name
        if name.startswith("google.protobuf.") and name not in _PLAIN_WELL_KNOWN:
            return None
        return lambda m: _converter(message_type)(m)
    return None  # float (rounded to its shortest form by the mapping)


def _same(value: Any) -> Any:
    return value


def _base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _double(value: float) -> Any:
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


__all__ = ["struct_dict", "to_dict"]
