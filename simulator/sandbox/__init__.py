"""Sandboxed test execution: agent-edited code runs in a limited child process.

``ForkServerRunner`` is the fast path (a warm helper forks one sandboxed child per run),
``SubprocessRunner`` the fresh-interpreter baseline, ``CachingRunner`` memoises either by
the content of the files, and ``default_runner()`` is the shared, cached fork server.
"""

from .cache import CachingRunner
from .contract import RunnerState, TestRunner
from .default import default_runner
from .errors import InvalidRunRequestError, RunnerClosedError, RunnerStartError, SandboxError
from .forkserver import ForkServerRunner
from .limits import SandboxLimits
from .report import OutcomeStatus, RunReport, RunStatus, TestOutcome
from .subprocess_runner import SubprocessRunner

__all__ = [
    "CachingRunner",
    "ForkServerRunner",
    "InvalidRunRequestError",
    "OutcomeStatus",
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
    "default_runner",
]
