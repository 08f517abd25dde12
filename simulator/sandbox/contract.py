"""The TestRunner contract shared by every way of running a test suite, and its lifecycle."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Protocol

from .limits import SandboxLimits
from .report import RunReport

__all__ = ["RunnerState", "TestRunner"]


class RunnerState(enum.Enum):
    """Lifecycle of a runner that owns a helper process."""

    NEW = "new"
    """Created; the helper starts on start() or on the first run()."""

    RUNNING = "running"
    """The helper is up and serving runs."""

    CLOSED = "closed"
    """close() was called; run() raises RunnerClosedError."""


class TestRunner(Protocol):
    """Runs test modules against a set of source files, in a sandbox."""

    def run(
        self,
        files: Mapping[str, bytes],
        test_files: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
    ) -> RunReport:
        """Run ``test_files`` (keys of ``files``) against ``files`` and report every test.

        Args:
            files: Normalised relative POSIX paths mapped to file content.
            test_files: The test modules to run, in order.
            limits: Resource limits; ``SandboxLimits()`` when None.

        Returns:
            The report; a failing run is a report, never an exception.

        Raises:
            InvalidRunRequestError: if a path is not normalised or a test file is missing.
            RunnerClosedError: if the runner was closed.
        """
        ...

    def close(self) -> None:
        """Release the runner's helper processes and folders; idempotent."""
        ...
