"""Minimal in-sandbox test runner: collects test functions and classes and runs them, no pytest.

Stdlib only: it runs inside the sandboxed child, whose ``sys.path`` is the run folder plus
the standard library. Collection rules follow pytest's defaults where they matter:

* module-level functions whose name starts with ``test`` (``async def`` ones each on a
  fresh event loop, as under ``asyncio.run``);
* methods starting with ``test`` of module-level classes starting with ``Test``, on a fresh
  instance per test (``setup_method``/``teardown_method`` are honoured);
* ``unittest.TestCase`` subclasses of any name, run through unittest itself;
* ``__test__ = False`` on a module, class or function opts it out.

A test passes when it returns; AssertionError means failed; any other exception means error.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import keyword
import sys
import traceback
import types
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Case", "collect_module", "import_test_module", "run_case", "run_coroutine", "run_suite"]

Emit = Callable[[dict[str, Any]], None]
_MESSAGE_LIMIT = 400
_TRACEBACK_LIMIT = 2400
_TRACEBACK_FRAMES = 12


@dataclass(frozen=True, slots=True)
class Case:
    """One collected test: its id and a zero-argument callable that runs it."""

    test_id: str
    run: Callable[[], tuple[str, BaseException | None]]
    """Returns ``("passed", None)`` or the status and the exception that decided it."""


@dataclass(frozen=True, slots=True)
class _Paths:
    run_dir: str
    stdlib_dirs: tuple[str, ...]
    hidden_dirs: tuple[str, ...]

    def show(self, filename: str) -> str | None:
        """Return the filename as shown to the agent, or None to hide the frame."""
        if filename.startswith("<"):
            return None
        for hidden in self.hidden_dirs:
            if filename.startswith(hidden + "/"):
                return None
        if filename.startswith(self.run_dir + "/"):
            return filename[len(self.run_dir) + 1 :]
        for std in self.stdlib_dirs:
            if filename.startswith(std + "/"):
                return "<stdlib>/" + filename[len(std) + 1 :]
        return filename

    def inside(self, filename: str) -> bool:
        return filename.startswith(self.run_dir + "/")


def _module_name(path: str) -> str | None:
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    if parts and all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return ".".join(parts)
    return None


def import_test_module(path: str, run_dir: str) -> types.ModuleType:
    """Import the test module at ``path`` (relative to ``run_dir``, which is on sys.path).

    Dotted names are used when the path allows it, so test modules may import each other and
    the code under test as packages; other paths are loaded from their file.
    """
    name = _module_name(path)
    if name is not None:
        return importlib.import_module(name)
    unique = "_sandbox_test_" + "".join(c if c.isalnum() else "_" for c in path[:-3])
    spec = importlib.util.spec_from_file_location(unique, run_dir + "/" + path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[unique] = module
    spec.loader.exec_module(module)
    return module


def _wanted(obj: object) -> bool:
    return getattr(obj, "__test__", True) is not False


def _call(function: Callable[[], object]) -> None:
    result = function()
    if inspect.iscoroutine(result):
        run_coroutine(result)


def run_coroutine(coro: Coroutine[Any, Any, object]) -> object:
    """Run an ``async def`` test as ``asyncio.run`` would, on a fresh event loop of its own.

    The same steps in the same order, minus those with nothing to do (each ran the loop once
    more to cancel no tasks, close no async generators or stop no executor) and the Ctrl-C
    handler (nobody presses Ctrl-C in a sandbox): 270 us per test became 95 here. A fresh
    loop per test keeps tests apart as pytest-asyncio does: a loop-bound object one test
    leaves behind fails in the next, as it would there.
    """
    import asyncio.runners  # pre-imported by the fork server; imported here only when needed

    events = asyncio.events
    loop = events.new_event_loop()
    try:
        events.set_event_loop(loop)
        return loop.run_until_complete(coro)
    finally:
        try:
            asyncio.runners._cancel_all_tasks(loop)  # type: ignore[attr-defined]
            # private attributes: should a Python lack them, do what asyncio.run does
            if getattr(loop, "_asyncgens", True):
                loop.run_until_complete(loop.shutdown_asyncgens())
            if getattr(loop, "_default_executor", True) is not None:
                loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            events.set_event_loop(None)
            loop.close()


def _classify(exc: BaseException) -> str:
    return "failed" if isinstance(exc, AssertionError) else "error"


def _function_case(test_id: str, function: Callable[[], object]) -> Case:
    def run() -> tuple[str, BaseException | None]:
        try:
            _call(function)
        except BaseException as exc:
            return _classify(exc), exc
        return "passed", None

    return Case(test_id, run)


def _method_case(test_id: str, cls: type, name: str) -> Case:
    def run() -> tuple[str, BaseException | None]:
        try:
            instance = cls()
            method = getattr(instance, name)
            setup = getattr(instance, "setup_method", None)
            if callable(setup):
                setup(method)
            try:
                _call(method)
            finally:
                teardown = getattr(instance, "teardown_method", None)
                if callable(teardown):
                    teardown(method)
        except BaseException as exc:
            return _classify(exc), exc
        return "passed", None

    return Case(test_id, run)


def _unittest_case(test_id: str, cls: type, name: str) -> Case:
    import unittest

    class Result(unittest.TestResult):
        decided: tuple[str, BaseException | None] = ("passed", None)

        def addFailure(self, test: Any, err: Any) -> None:
            self.decided = ("failed", err[1])

        def addError(self, test: Any, err: Any) -> None:
            self.decided = (_classify(err[1]), err[1])

        def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
            if err is not None and self.decided[0] == "passed":
                self.decided = (_classify(err[1]), err[1])

    def run() -> tuple[str, BaseException | None]:
        try:
            result = Result()
            cls(name).run(result)
        except BaseException as exc:
            return "error", exc
        return result.decided

    return Case(test_id, run)


def _method_names(cls: type) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        for name, value in vars(klass).items():
            if name in seen or not name.startswith("test"):
                continue
            seen.add(name)
            if isinstance(value, (types.FunctionType, staticmethod)) and _wanted(value):
                names.append(name)
    return names


def collect_module(path: str, module: types.ModuleType) -> list[Case]:
    """Return the module's tests in definition order."""
    if not _wanted(module):
        return []
    unittest = sys.modules.get("unittest")
    cases: list[Case] = []
    for name, obj in list(vars(module).items()):
        if isinstance(obj, types.FunctionType) and name.startswith("test") and _wanted(obj):
            cases.append(_function_case(f"{path}::{name}", obj))
        elif isinstance(obj, type) and _wanted(obj):
            if unittest is not None and issubclass(obj, unittest.TestCase):
                cases.extend(
                    _unittest_case(f"{path}::{name}::{m}", obj, m) for m in _method_names(obj)
                )
            elif name.startswith("Test"):
                cases.extend(
                    _method_case(f"{path}::{name}::{m}", obj, m) for m in _method_names(obj)
                )
    return cases


def _one_line(text: str) -> str:
    text = " ".join(part.strip() for part in text.strip().splitlines() if part.strip())
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 3] + "..."


def _frames(exc: BaseException) -> traceback.StackSummary:
    # Source lines are read lazily (FrameSummary.line), only for the frames that are shown:
    # looking them up for every frame read whole runner and stdlib files per failing test.
    return traceback.StackSummary.extract(traceback.walk_tb(exc.__traceback__), lookup_lines=False)


def _innermost_in_run(
    frames: Sequence[traceback.FrameSummary], paths: _Paths
) -> traceback.FrameSummary | None:
    found = None
    for frame in frames:
        if paths.inside(frame.filename):
            found = frame
    return found


def _message(
    exc: BaseException, paths: _Paths, frames: Sequence[traceback.FrameSummary] | None = None
) -> str:
    kind = type(exc).__name__
    text = _one_line(str(exc))
    if not text and isinstance(exc, AssertionError):
        frame = _innermost_in_run(_frames(exc) if frames is None else frames, paths)
        if frame is not None:
            line = (frame.line or "").strip()
            text = (
                line
                if line.startswith("assert")
                else f"at {paths.show(frame.filename)}:{frame.lineno}"
            )
    return f"{kind}: {text}" if text else kind


def _exception_only(exc: BaseException) -> list[str]:
    # traceback.format_exception_only(exc), minus the work it throws away: it extracts the
    # stack of every chained exception and reads their source lines, then prints neither.
    summary = traceback.TracebackException(
        type(exc), exc, None, limit=0, lookup_lines=False, compact=True
    )
    return list(summary.format_exception_only())


def format_traceback(
    exc: BaseException, paths: _Paths, frames: Sequence[traceback.FrameSummary] | None = None
) -> str:
    """Return a short traceback: frames from the first one in the run folder, paths relative."""
    if frames is None:
        frames = _frames(exc)
    start = next((i for i, f in enumerate(frames) if paths.inside(f.filename)), len(frames))
    shown = [(name, f) for f in frames[start:] if (name := paths.show(f.filename)) is not None]
    omitted = len(shown) - _TRACEBACK_FRAMES
    lines = ["Traceback (most recent call last):\n"] if shown else []
    if omitted > 0:
        lines.append(f"  [... {omitted} frames omitted ...]\n")
        shown = shown[-_TRACEBACK_FRAMES:]
    kept = [
        traceback.FrameSummary(name, f.lineno, f.name, line=f.line, locals=None)
        for name, f in shown
    ]
    lines.extend(traceback.format_list(kept))
    lines.extend(_exception_only(exc))
    text = "".join(lines).replace(paths.run_dir + "/", "")
    if len(text) > _TRACEBACK_LIMIT:
        text = "[...]\n" + text[-_TRACEBACK_LIMIT:]
    return text


def describe_import_failure(path: str, exc: BaseException, paths: _Paths) -> str:
    """Return one line naming the test module, the failing file and line, and the exception."""
    if isinstance(exc, SyntaxError):
        where = paths.show(exc.filename or "") or exc.filename or "?"
        return (
            f"import of {path} failed: {type(exc).__name__}: {exc.msg} ({where}, line {exc.lineno})"
        )
    frames = _frames(exc)
    frame = _innermost_in_run(frames, paths)
    where = f" ({paths.show(frame.filename)}, line {frame.lineno})" if frame is not None else ""
    return f"import of {path} failed: {_message(exc, paths, frames)}{where}"


def run_case(case: Case, paths: _Paths) -> dict[str, Any]:
    """Run one test and return its outcome message."""
    status, exc = case.run()
    if exc is None:
        return {"t": "outcome", "id": case.test_id, "status": status, "message": "", "tb": ""}
    frames = _frames(exc)
    return {
        "t": "outcome",
        "id": case.test_id,
        "status": status,
        "message": _message(exc, paths, frames),
        "tb": format_traceback(exc, paths, frames),
    }


def run_suite(
    test_files: Sequence[str],
    *,
    run_dir: str,
    stdlib_dirs: Sequence[str],
    hidden_dirs: Sequence[str],
    emit: Emit,
    after_each: Callable[[], None],
) -> None:
    """Import every test module, then run every collected test, emitting messages as it goes.

    Emits ``collect`` before importing each module, ``collection_error`` for a module that
    fails to import, ``start`` and ``outcome`` around each test, and a final ``end``.
    """
    paths = _Paths(run_dir, tuple(stdlib_dirs), tuple(hidden_dirs))
    cases: list[Case] = []
    failures: list[str] = []
    for path in test_files:
        emit({"t": "collect", "file": path})
        try:
            module = import_test_module(path, run_dir)
        except BaseException as exc:
            message = describe_import_failure(path, exc, paths)
            failures.append(message)
            emit(
                {
                    "t": "collection_error",
                    "file": path,
                    "message": message,
                    "tb": format_traceback(exc, paths),
                }
            )
        else:
            cases.extend(collect_module(path, module))
        after_each()
    for case in cases:
        emit({"t": "start", "id": case.test_id})
        outcome = run_case(case, paths)
        after_each()
        emit(outcome)
    if failures:
        more = (
            f" (and {len(failures) - 1} more test modules failed to import)"
            if len(failures) > 1
            else ""
        )
        emit({"t": "end", "status": "collection_error", "message": failures[0] + more})
    else:
        emit({"t": "end", "status": "completed", "message": ""})
