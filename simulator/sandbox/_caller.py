"""Caller-side request checks and response decoding shared by the runners."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any, cast

from .errors import InvalidRunRequestError
from .report import OutcomeStatus, ProbeReport, RunReport, RunStatus, TestOutcome

__all__ = [
    "check_request",
    "crashed_report",
    "decode_response",
    "probe_report_from_dict",
    "report_from_dict",
]

MAX_REQUEST_BYTES = 256 * 2**20

_RUN_STATUSES = frozenset(
    {"completed", "collection_error", "timeout", "crashed", "sandbox_violation"}
)
_OUTCOME_STATUSES = frozenset({"passed", "failed", "error"})


def _check_path(path: object) -> str:
    if not isinstance(path, str) or not path:
        raise InvalidRunRequestError(f"file paths must be non-empty str, got {path!r}")
    if (
        path.startswith("/")
        or "\\" in path
        or "\x00" in path
        or posixpath.normpath(path) != path
        or path.split("/", 1)[0] in ("..", ".")
    ):
        raise InvalidRunRequestError(
            f"file path {path!r} is not a normalised relative POSIX path"
            " (like 'pkg/module.py'); normalise it before calling run()"
        )
    return path


def check_request(files: Mapping[str, bytes], test_files: Sequence[str]) -> None:
    """Validate a run request.

    Raises:
        InvalidRunRequestError: naming the first offending path or test file.
    """
    if isinstance(test_files, str):
        raise InvalidRunRequestError("test_files must be a sequence of paths, not one str")
    total = 0
    dirs: set[str] = set()
    for path, content in files.items():
        _check_path(path)
        if not isinstance(content, bytes):
            raise InvalidRunRequestError(
                f"content of {path!r} must be bytes, got {type(content).__name__}"
            )
        total += len(content)
        parent = posixpath.dirname(path)
        while parent:
            dirs.add(parent)
            parent = posixpath.dirname(parent)
    clash = dirs.intersection(files)
    if clash:
        raise InvalidRunRequestError(f"{sorted(clash)[0]!r} is both a file and a folder")
    if total > MAX_REQUEST_BYTES:
        raise InvalidRunRequestError(
            f"files hold {total} bytes; the sandbox accepts at most {MAX_REQUEST_BYTES}"
        )
    seen: set[str] = set()
    for test_file in test_files:
        if test_file not in files:
            raise InvalidRunRequestError(f"test file {test_file!r} is not among the files")
        if not test_file.endswith(".py"):
            raise InvalidRunRequestError(f"test file {test_file!r} is not a .py file")
        if test_file in seen:
            raise InvalidRunRequestError(f"test file {test_file!r} is listed twice")
        seen.add(test_file)


def decode_response(data: bytes) -> RunReport:
    """Build a RunReport from the helper's JSON response."""
    return report_from_dict(json.loads(data))


def report_from_dict(raw: dict[str, Any]) -> RunReport:
    """Build a RunReport from a collector's verdict."""
    status = raw.get("status")
    if status not in _RUN_STATUSES:
        return crashed_report(f"the sandbox helper answered with an unknown status {status!r}")
    outcomes = tuple(
        TestOutcome(
            test_id=str(test_id),
            status=cast(OutcomeStatus, result if result in _OUTCOME_STATUSES else "error"),
            message=str(message),
            traceback=str(tb),
        )
        for test_id, result, message, tb in raw.get("outcomes", [])
    )
    return RunReport(
        status=cast(RunStatus, status),
        outcomes=outcomes,
        output=str(raw.get("output", "")),
        message=str(raw.get("message", "")),
        cached=False,
    )


def probe_report_from_dict(raw: dict[str, Any]) -> ProbeReport:
    """Build a ProbeReport from a collector's verdict; keeps only well-formed observations."""
    status = raw.get("status")
    if status not in _RUN_STATUSES:
        return ProbeReport(
            "crashed", {}, f"the sandbox helper answered with an unknown status {status!r}"
        )
    observed = raw.get("observations")
    observations = (
        {k: v for k, v in observed.items() if isinstance(k, str) and isinstance(v, str)}
        if isinstance(observed, dict)
        else {}
    )
    cpu = raw.get("cpu_seconds")
    return ProbeReport(
        cast(RunStatus, status),
        observations,
        str(raw.get("message", "")),
        cpu_seconds=float(cpu) if isinstance(cpu, (int, float)) else 0.0,
    )


def crashed_report(message: str) -> RunReport:
    """Return a report for a run that produced no result at all."""
    return RunReport(status="crashed", outcomes=(), output="", message=message, cached=False)
