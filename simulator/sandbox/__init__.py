"""Sandboxed test execution: agent-edited code runs in a limited child process.

``ForkServerRunner`` is the fast path (a warm helper forks one sandboxed child per run),
``SubprocessRunner`` the fresh-interpreter baseline, ``CachingRunner`` memoises either by
the content of the files, and ``default_runner()`` is the shared, cached fork server for the
agents' visible suites. Hidden checks never run there: ``default_grader_runner()`` is a
separate fork server whose children only observe (``ProbeRunner.observe``); the verdict is
made by the caller (``metasre.simulator.hidden``).
"""

from .cache import CachingRunner
from .contract import ProbeRunner, RunnerState, TestRunner
from .default import (
    Isolation,
    allow_weak_isolation,
    default_grader_runner,
    default_runner,
    default_traffic_runner,
    isolation,
)
from .errors import (
    InvalidRunRequestError,
    RunnerClosedError,
    RunnerStartError,
    SandboxError,
    WeakIsolationError,
    WrongRunnerError,
)
from .forkserver import ForkServerRunner
from .limits import SandboxLimits
from .report import OutcomeStatus, ProbeReport, RunReport, RunStatus, TestOutcome
from .subprocess_runner import SubprocessRunner

__all__ = [
    "CachingRunner",
    "ForkServerRunner",
    "InvalidRunRequestError",
    "Isolation",
    "OutcomeStatus",
    "ProbeReport",
    "ProbeRunner",
    "RunReport",
    "RunStatus",
    "RunnerClosedError",
    "RunnerStartError",
    "RunnerState",
    "SandboxError",
    "SandboxLimits",
    "SubprocessRunner",
    "TestOutcome",
    "TestRunner",
    "WeakIsolationError",
    "WrongRunnerError",
    "allow_weak_isolation",
    "default_grader_runner",
    "default_runner",
    "default_traffic_runner",
    "isolation",
]
