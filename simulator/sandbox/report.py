"""Results of a sandboxed test run: one outcome per test and a report for the run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

__all__ = ["OutcomeStatus", "ProbeReport", "RunReport", "RunStatus", "TestOutcome"]

OutcomeStatus = Literal["passed", "failed", "error"]
RunStatus = Literal["completed", "collection_error", "timeout", "crashed", "sandbox_violation"]


@dataclass(frozen=True, slots=True)
class TestOutcome:
    """The result of one test function or method."""

    # pytest would otherwise try to collect this class wherever a test module imports it.
    __test__: ClassVar[bool] = False

    test_id: str
    """``path::name`` or ``path::Class::name``, e.g. ``tests/unit/test_ranker.py::test_score``."""

    status: OutcomeStatus
    """``failed`` for an AssertionError, ``error`` for any other exception."""

    message: str
    """One line naming the exception type and its message; empty when the test passed."""

    traceback: str
    """Short traceback with paths relative to the run folder; empty when the test passed."""


@dataclass(frozen=True, slots=True)
class RunReport:
    """Everything a caller learns from one run of a test suite."""

    status: RunStatus
    """``completed`` when every test module imported and the runner reached the end."""

    outcomes: tuple[TestOutcome, ...]
    """Outcomes in file order, then definition order; partial when the run did not complete."""

    output: str
    """Captured stdout and stderr of the tests (interleaved as written), then the traceback
    of each module that failed to import; cut to about 8 KB around an omission marker, with
    run-folder paths made relative."""

    message: str
    """Why the run did not complete, in plain words; empty when status is ``completed``."""

    cached: bool = False
    """True when the report came from a cache rather than a fresh run."""

    @property
    def passed(self) -> int:
        """Number of tests that passed."""
        return sum(1 for o in self.outcomes if o.status == "passed")

    @property
    def failed(self) -> int:
        """Number of tests that failed an assertion."""
        return sum(1 for o in self.outcomes if o.status == "failed")

    @property
    def errors(self) -> int:
        """Number of tests that raised an exception other than AssertionError."""
        return sum(1 for o in self.outcomes if o.status == "error")

    @property
    def ok(self) -> bool:
        """True when the run completed and every collected test passed."""
        return self.status == "completed" and all(o.status == "passed" for o in self.outcomes)

    def outcome(self, test_id: str) -> TestOutcome | None:
        """Return the outcome of ``test_id``, or None if that test did not run."""
        for o in self.outcomes:
            if o.test_id == test_id:
                return o
        return None


@dataclass(frozen=True, slots=True)
class ProbeReport:
    """What a grader run's probes observed, as the sandboxed child told it.

    A claim of code under test, never a verdict: the grader compares each observation with
    the reference's, which the child never saw. The run's output is not kept at all, so
    nothing printed in a grader run can reach anyone.
    """

    status: RunStatus
    """``completed`` when the probe module imported and every probe was called."""

    observations: Mapping[str, str]
    """Probe name -> the JSON text it returned (``{"raised": ...}`` when it raised)."""

    message: str
    """Why the run did not complete, in plain words; empty when status is ``completed``."""

    cached: bool = False
    """True when the report came from a cache rather than a fresh run."""

    cpu_seconds: float = 0.0
    """User plus system CPU time the sandboxed child used, as its supervisor measured it (the
    child cannot change it); 0.0 when no child ran or the runner answers before its child is
    reaped (the fork server). What one grading run costs the machine; it never reaches a grade."""

    def observation(self, probe: str) -> str | None:
        """Return what ``probe`` observed, or None if it never reported."""
        return self.observations.get(probe)
