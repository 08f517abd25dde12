"""The TestRunner contract shared by every way of running a test suite, and its lifecycle."""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

from .limits import SandboxLimits
from .report import ProbeReport, RunReport

__all__ = ["ProbeRunner", "RunnerState", "TestRunner"]


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
        shared: Collection[str] = (),
    ) -> RunReport:
        """Run ``test_files`` (keys of ``files``) against ``files`` and report every test.

        Args:
            files: Normalised relative POSIX paths mapped to file content.
            test_files: The test modules to run, in order.
            limits: Resource limits; ``SandboxLimits()`` when None.
            shared: Paths whose content every session has (the scenario as shipped): a runner
                may keep what it derives from these, and nothing else, for later runs. It
                never changes a report.

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


class ProbeRunner(Protocol):
    """Calls a scenario's hidden probes against a set of source files, in a sandbox.

    Only grader runners implement it; what it returns are observations, never verdicts.
    """

    def observe(
        self,
        files: Mapping[str, bytes],
        probe_file: str,
        probes: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
    ) -> ProbeReport:
        """Call each of ``probes`` (functions of ``probe_file``, a key of ``files``) in order.

        Returns:
            The JSON each probe returned, by name; a failing run is a report, never an
            exception.

        Raises:
            InvalidRunRequestError: if a path is not normalised or the probe file is missing.
            RunnerClosedError: if the runner was closed.
        """
        ...

    def close(self) -> None:
        """Release the runner's helper processes and folders; idempotent."""
        ...
