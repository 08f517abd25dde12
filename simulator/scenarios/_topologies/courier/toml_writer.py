"""A small TOML writer for the courier generators (the standard library only reads TOML)."""

from __future__ import annotations

import json
import re
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def key(k: str) -> str:
    """A table key, quoted when it is not a bare key."""
    return k if _BARE.match(k) else json.dumps(k)


def value(v: Any) -> str:
    """One value, inline (tables as inline tables)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        if "\n" in v:
            return '"""' + v.replace("\\", "\\\\").replace('"""', '\\"""') + '"""'
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def table(header: str, data: dict[str, Any]) -> str:
    """`header` (`[[name]]` or `[name]`) followed by its keys, one a line."""
    return "\n".join([header, *(f"{key(k)} = {value(v)}" for k, v in data.items())]) + "\n"
