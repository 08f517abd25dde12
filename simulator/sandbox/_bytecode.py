"""Caller-side bytecode cache: ship hash-based .pyc files with the sources, compiled once.

A child imports a fresh copy of the sources on every run; compiling them dominated a small
suite's run time. Agents change one file at a time, so compiling each distinct content once
per process and shipping unchecked hash-based pycs (PEP 552) lets the child skip compiling.
The import system rewrites ``co_filename`` to the real path in the run folder on load, so
tracebacks are unaffected. Sources that do not compile get no pyc: the child then compiles
them itself and reports the SyntaxError with file and line, as before.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import threading
from collections import OrderedDict
from collections.abc import Mapping

__all__ = ["with_bytecode"]

_FLAGS_UNCHECKED_HASH = (0b01).to_bytes(4, "little")
_MAX_ENTRIES = 4096
_lock = threading.Lock()
_cache: OrderedDict[bytes, tuple[str, bytes | None]] = OrderedDict()


def _compile(path: str, content: bytes) -> bytes | None:
    try:
        code = compile(content, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError):
        return None
    return (
        importlib.util.MAGIC_NUMBER
        + _FLAGS_UNCHECKED_HASH
        + importlib.util.source_hash(content)
        + marshal.dumps(code)
    )


def _entry(path: str, content: bytes) -> tuple[str, bytes | None]:
    key = hashlib.sha256(path.encode() + b"\0" + content).digest()
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    entry = (importlib.util.cache_from_source(path), _compile(path, content))
    with _lock:
        _cache[key] = entry
        while len(_cache) > _MAX_ENTRIES:
            _cache.popitem(last=False)
    return entry


def with_bytecode(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """Return ``files`` plus a compiled pyc beside every ``.py`` source that compiles.

    A pyc supplied in ``files`` for one of the sources is replaced (or dropped when the
    source does not compile), so the code that runs is always the source that was given.
    """
    out = dict(files)
    for path, content in files.items():
        if path.endswith(".py"):
            pyc_path, data = _entry(path, content)
            if data is None:
                out.pop(pyc_path, None)
            else:
                out[pyc_path] = data
    return out
