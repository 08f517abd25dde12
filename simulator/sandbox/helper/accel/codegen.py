"""A cache of the code dataclasses and namedtuple generate, compiled once in the fork server.

Stdlib only (runs in the helper and in its children). ``@dataclass`` writes the source of
``__init__``, ``__repr__``, ``__eq__``... for every class and compiles it with ``exec``;
``namedtuple`` does the same for ``__new__`` with ``eval``. Compiling those texts was half of
the import time of a typical service package, and every run recompiled the same texts.

``install()`` gives both modules an ``exec``/``eval`` of their own (a module global shadows
the builtin) that looks the text up first. A child lists the texts it had to compile, each
with the file whose code generated it; the helper compiles them itself (it never accepts code
objects from a child: a text maps to exactly what ``compile`` makes of it, so no run can
change what another executes) and spares forked afterwards inherit them. Before its tests
run, a child keeps only the texts of files it was given itself (``keep_only``), so no run
sees what another run's code generated. Code objects are immutable: sharing one between two
classes is unobservable except by identity.
"""

from __future__ import annotations

import builtins
import sys
import types
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MAX_ENTRIES", "install", "keep_only", "learn", "missed", "reset_misses"]

MAX_TEXT = 8192
"""Longest text cached (a 100-field ``__init__`` is about 5 KB)."""

MAX_ENTRIES = 4096
"""(file, text) pairs the helper keeps; the files heard of first go first."""

MAX_MISSES = 256
"""Texts a child reports per run."""

MAX_REPORT_CHARS = 256_000
"""Characters of text a child reports per run, well inside one report frame."""

Text = tuple[str, str]
"""(mode, source): "exec" for dataclasses, "eval" for namedtuple."""

# The texts the standard library generates start like this (3.11 to 3.13); anything else
# that reaches our exec (tests may call ``dataclasses.exec`` themselves) is not cached.
_PREFIXES = {"exec": "def __create_fn__(", "eval": "lambda _cls"}

_public: dict[Text, types.CodeType] = {}
"""Texts the helper generated itself (its warm-up): every child may use them."""
_mine: dict[Text, types.CodeType] = {}
"""In a child: the texts of its own files, and those it compiled itself."""
_owned: dict[bytes, dict[Text, types.CodeType]] = {}
"""Per file key (a digest of path and content, see keep_only), the texts its code generated."""
_owned_count = 0
_compiled: dict[Text, types.CodeType] = {}
"""Every text above, once: owners of the same text share one code object."""

_run_prefix = ""
_file_keys: Mapping[str, bytes] = {}
_misses: list[tuple[bytes, str, str]] = []
_missed_chars = 0
_real_exec = builtins.exec
_real_eval = builtins.eval


def _owner() -> bytes | None:
    """Return the key of the run's file whose code is generating, or None."""
    if not _run_prefix:
        return None
    try:
        frame: types.FrameType | None = sys._getframe(3)  # _owner <- _code <- _exec <- caller
    except ValueError:  # called from C with no Python frame above
        return None
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_run_prefix):
            return _file_keys.get(filename[len(_run_prefix) :])
        frame = frame.f_back
    return None


def _code(mode: str, text: str) -> types.CodeType:
    global _missed_chars
    key = (mode, text)
    code = _public.get(key) or _mine.get(key)
    if code is None:
        # flags as exec/eval would use from a module without __future__ imports
        code = compile(text, "<string>", mode, dont_inherit=True)
        if len(text) <= MAX_TEXT and text.startswith(_PREFIXES[mode]):
            (_mine if _run_prefix else _public)[key] = code
            owner = _owner()
            fits = len(_misses) < MAX_MISSES and _missed_chars + len(text) <= MAX_REPORT_CHARS
            if owner is not None and fits:
                _misses.append((owner, mode, text))
                _missed_chars += len(text)
    return code


def _exec(source: Any, globs: Any = None, locs: Any = None, /, **kwargs: Any) -> None:
    if globs is None:  # exec would use the caller's namespaces, not ours
        frame = sys._getframe(1)
        globs, locs = frame.f_globals, frame.f_locals if locs is None else locs
    if type(source) is str:
        source = _code("exec", source)
    _real_exec(source, globs, locs, **kwargs)


def _eval(source: Any, globs: Any = None, locs: Any = None, /) -> Any:
    if globs is None:
        frame = sys._getframe(1)
        globs, locs = frame.f_globals, frame.f_locals if locs is None else locs
    if type(source) is str:
        source = _code("eval", source)
    return _real_eval(source, globs, locs)


def install() -> None:
    """Route the code generation of dataclasses and collections through the cache."""
    import collections
    import dataclasses

    dataclasses.exec = _exec  # type: ignore[attr-defined]
    collections.eval = _eval  # type: ignore[attr-defined]


def keep_only(run_dir: str, file_keys: Mapping[str, bytes]) -> object:
    """In a child, before its tests run: keep the texts of these files and the public ones.

    Args:
        run_dir: The run folder; code running from it is attributed to its files.
        file_keys: Relative path of each of the run's sources to its key (a digest of
            path and content the caller computed, see _bytecode.file_key).

    Returns:
        The tables left behind, for the caller to abandon without freeing them (freeing
        would touch, and so copy, every page they occupy).
    """
    global _mine, _owned, _compiled, _run_prefix, _file_keys
    mine: dict[Text, types.CodeType] = {}
    for key in set(file_keys.values()):
        mine.update(_owned.get(key, ()))
    dropped = (_owned, _compiled)
    _mine, _owned, _compiled = mine, {}, {}
    _run_prefix = run_dir + "/"
    _file_keys = file_keys
    reset_misses()
    return dropped


def reset_misses() -> None:
    """Forget the texts compiled so far; they become public (the helper calls this)."""
    global _missed_chars
    _misses.clear()
    _missed_chars = 0


def missed() -> list[tuple[str, str, str]]:
    """Return (file key in hex, mode, text) of each text compiled since ``keep_only``."""
    return [(owner.hex(), mode, text) for owner, mode, text in _misses]


def learn(entries: Iterable[Any]) -> int:
    """Compile texts a child reported and keep them for children forked from now on.

    Args:
        entries: ``[file key in hex, mode, text]`` lists as decoded from the child's frame;
            anything malformed, oversized or not shaped like generated code is skipped.

    Returns:
        How many (file, text) pairs were new.
    """
    global _owned_count
    added = 0
    for entry in list(entries)[:MAX_MISSES]:
        if not (isinstance(entry, (list, tuple)) and len(entry) == 3):
            continue
        owner_hex, mode, text = entry
        if (
            mode not in _PREFIXES
            or not isinstance(text, str)
            or len(text) > MAX_TEXT
            or not text.startswith(_PREFIXES[mode])
            or not isinstance(owner_hex, str)
            or len(owner_hex) != 32
        ):
            continue
        try:
            owner = bytes.fromhex(owner_hex)
        except ValueError:
            continue
        texts = _owned.setdefault(owner, {})
        key = (mode, text)
        if key in texts:
            continue
        code = _compiled.get(key)
        if code is None:
            try:
                code = compile(text, "<string>", mode, dont_inherit=True)
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                continue
            _compiled[key] = code
        texts[key] = code
        _owned_count += 1
        added += 1
    while _owned_count > MAX_ENTRIES and _owned:
        oldest = next(iter(_owned))
        _owned_count -= len(_owned.pop(oldest))
    if added:
        # texts no file owns any more go too
        live = {key for texts in _owned.values() for key in texts}
        for key in [k for k in _compiled if k not in live]:
            del _compiled[key]
    return added
