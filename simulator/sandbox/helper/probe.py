"""The grader's side of a sandboxed run: call each probe and send back what it observed.

Stdlib only (runs inside the sandboxed child of a grader run). A probe is a function of a
scenario's hidden probe module that calls the services' code on fixed inputs and returns plain
data. This module only relays that data, as JSON text, one ``observation`` frame per probe.
Nothing here decides whether a check passed: the expected values never enter this process,
and the caller compares observations with them on the trusted side. Code under test can make
this process say anything at all; to be counted it would have to say exactly what the
reference solution's code says, which is what fixing the bug means.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

from . import minitest

__all__ = ["MAX_OBSERVATION", "observe"]

MAX_OBSERVATION = 64 * 1024
"""Characters of JSON kept per probe; a longer observation is recorded as too long."""


def _encode(value: object) -> str:
    text = json.dumps(value, sort_keys=True, allow_nan=False, separators=(",", ":"))
    if len(text) > MAX_OBSERVATION:
        return json.dumps({"too_long": len(text)})
    return text


def observe(
    probe_file: str,
    probes: Sequence[str],
    *,
    run_dir: str,
    emit: Callable[[dict[str, Any]], None],
) -> None:
    """Import ``probe_file`` and call each of ``probes`` in order, emitting what each returned.

    A probe that raises is observed as ``{"raised": <exception type name>}``; a value that is
    not plain JSON data as ``{"unserialisable": <type name>}``.
    """
    emit({"t": "collect", "file": probe_file})
    try:
        module = minitest.import_test_module(probe_file, run_dir)
    except BaseException as exc:
        emit({"t": "end", "status": "collection_error", "message": type(exc).__name__})
        return
    for name in probes:
        emit({"t": "start", "id": name})
        try:
            value = getattr(module, name)()
            if inspect.iscoroutine(value):
                value = minitest.run_coroutine(value)
        except BaseException as exc:
            text = _encode({"raised": type(exc).__name__})
        else:
            try:
                text = _encode(value)
            except (TypeError, ValueError, RecursionError):
                text = _encode({"unserialisable": type(value).__name__})
        emit({"t": "observation", "id": name, "value": text})
    emit({"t": "end", "status": "completed", "message": ""})
