"""How a probe module enters a sandbox: at one neutral path, with nothing but its calls.

Two kinds of run call probe functions on the current code: the world's production traffic,
during an episode (``metasre.simulator.traffic``), and the hidden checks, once it has ended
(``metasre.simulator.hidden``). Code under test can read whatever its process holds, so both
ship their module the same way: under ``PROBE_PATH`` (the folder it came from, ``hidden/``,
would name the grader), without docstrings or comments (a probe module's prose explains the
incident). What is left is the calls themselves, which a run must see to make them.
"""

from __future__ import annotations

import ast
import threading
from functools import lru_cache

__all__ = ["PROBE_PATH", "parse_module", "probe_functions", "shipped_source"]

_PARSING = threading.Lock()
"""CPython 3.11's ast.parse is not thread-safe: two threads parsing at once can fail with
SystemError "AST constructor recursion depth mismatch" (seen in the suite). Our own parses take
this lock; the standard library's traceback formatting parses too (its caret anchors), outside
it, so a parse that still meets the race is tried again."""


def parse_module(source: bytes) -> ast.Module:
    """``source`` parsed, one thread at a time (again if another thread's parse raced it)."""
    text = source.decode("utf-8")
    for attempt in range(3):
        try:
            with _PARSING:
                return ast.parse(text)
        except SystemError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


PROBE_PATH = "traffic/replay.py"
"""Where every probe run finds its module, traffic or grader alike: one folder deep, like the
``hidden/`` module it stands for (a probe may find the tree from its own ``__file__``)."""


# Every grading and every traffic serve ships its module again, mostly the same few bytes: the
# parse and unparse were a quarter of `metasre validate`'s time on a symptom-first family
# (ads-errors: 18.6 s of 78 s, 196 calls over 6 seeds). A pure function of immutable bytes.
@lru_cache(maxsize=256)
def shipped_source(source: bytes) -> bytes:
    """Return ``source`` as a probe run gets it: the same code, no docstrings, no comments.

    Raises:
        SyntaxError: ``source`` is not Python (a scenario's own module; validate finds it).
    """
    tree = parse_module(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                # a body must keep one statement: a function that was all docstring passes
                node.body = body[1:] or [ast.Pass()]
    # unparse writes no comments
    with _PARSING:
        text = ast.unparse(tree)
    return (text + "\n").encode("utf-8")


def probe_functions(source: bytes) -> list[str]:
    """Return every function a probe run of ``source`` calls: its public ones without parameters.

    A grader run calls all of them, in name order, whichever checks the seed's grade reads:
    the list a run receives is the same for every seed of a family, so it does not say which
    checks this seed's fix must flip.
    """
    return list(_probe_functions(source))


@lru_cache(maxsize=256)  # asked on every grading, like shipped_source
def _probe_functions(source: bytes) -> tuple[str, ...]:
    names = []
    for node in parse_module(source).body:
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and not node.name.startswith("_")
            and not (node.args.args or node.args.posonlyargs or node.args.kwonlyargs)
            and node.args.vararg is None
            and node.args.kwarg is None
        ):
            names.append(node.name)
    return tuple(sorted(names))
