"""Caller-side bytecode cache: ship hash-based .pyc files with the sources, compiled once.

A child imports a fresh copy of the sources on every run; compiling them dominated a small
suite's run time. Agents change one file at a time, so compiling each distinct content once
per process and shipping unchecked hash-based pycs (PEP 552) lets the child skip compiling.
The import system rewrites ``co_filename`` to the real path in the run folder on load, so
tracebacks are unaffected. Sources that do not compile get no pyc: the child then compiles
them itself and reports the SyntaxError with file and line, as before.

Each source also gets a key, a digest of its path and content that the fork server files what
it learns about the source under (see helper.accel); a child is handed the keys of
its own sources only, so it can find nothing learned from anyone else's.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
from collections.abc import Mapping
from dataclasses import dataclass

from ..lru import Lru

__all__ = ["Compiled", "compile_files", "file_key", "with_bytecode"]

_FLAGS_UNCHECKED_HASH = (0b01).to_bytes(4, "little")
_MAX_ENTRIES = 4096
# Keyed by the content itself, not a digest of it: a dict compares keys on a hash match, so
# no collision can hand one source another's code, and the hash of a bytes object is
# computed once per object (an episode hands over the same objects run after run).
_cache: Lru[tuple[str, bytes], tuple[str, bytes | None, bytes]] = Lru(_MAX_ENTRIES)


@dataclass(frozen=True, slots=True)
class Compiled:
    """A request's files with their bytecode, and what the fork server may learn from it."""

    files: dict[str, bytes]
    """The files plus a pyc beside every source that compiles."""

    keys: dict[str, bytes]
    """Path of every ``.py`` file to its key (see file_key)."""

    lessons: list[tuple[bytes, bytes]]
    """(key, pyc) of every source that compiled: the same objects, run after run."""


def file_key(path: str, content: bytes) -> bytes:
    """Return the key of one source: a digest nobody can match without the same file."""
    return hashlib.blake2b(path.encode() + b"\0" + content, digest_size=16).digest()


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


def _entry(path: str, content: bytes) -> tuple[str, bytes | None, bytes]:
    cache_key = (path, content)
    hit = _cache.get(cache_key)
    if hit is not None:
        return hit
    entry = (
        importlib.util.cache_from_source(path),
        _compile(path, content),
        file_key(path, content),
    )
    _cache.put(cache_key, entry)
    return entry


def compile_files(files: Mapping[str, bytes]) -> Compiled:
    """Return ``files`` plus a compiled pyc beside every ``.py`` source that compiles.

    A pyc supplied in ``files`` for one of the sources is replaced (or dropped when the
    source does not compile), so the code that runs is always the source that was given.
    """
    out = dict(files)
    keys: dict[str, bytes] = {}
    lessons: list[tuple[bytes, bytes]] = []
    for path, content in files.items():
        if path.endswith(".py"):
            pyc_path, data, key = _entry(path, content)
            keys[path] = key
            if data is None:
                out.pop(pyc_path, None)
            else:
                out[pyc_path] = data
                lessons.append((key, data))
    return Compiled(out, keys, lessons)


def with_bytecode(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """Return ``files`` plus a compiled pyc beside every ``.py`` source (see compile_files)."""
    return compile_files(files).files
