"""Errors raised by the sandbox runners to their callers."""

from __future__ import annotations

__all__ = [
    "InvalidRunRequestError",
    "RunnerClosedError",
    "RunnerStartError",
    "SandboxError",
    "WeakIsolationError",
    "WrongRunnerError",
]


class SandboxError(Exception):
    """Base class of every error the sandbox package raises."""


class InvalidRunRequestError(SandboxError, ValueError):
    """Raised when run() gets files or test files it cannot run (bad path, missing test file)."""


class RunnerClosedError(SandboxError):
    """Raised when run() is called on a runner after close()."""


class RunnerStartError(SandboxError):
    """Raised when the sandbox helper process cannot be started or does not answer."""


class WeakIsolationError(RunnerStartError):
    """Raised when a layer every run needs is missing here and weakness was not allowed.

    The required layers are Landlock and seccomp; see ForkServerRunner.
    """


class WrongRunnerError(SandboxError):
    """Raised when a grader runner is asked for a visible run, or a visible one for probes.

    The two never share a process.
    """
