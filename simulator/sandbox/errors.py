"""Errors raised by the sandbox runners to their callers."""

from __future__ import annotations

__all__ = [
    "InvalidRunRequestError",
    "RunnerClosedError",
    "RunnerStartError",
    "SandboxError",
]


class SandboxError(Exception):
    """Base class of every error the sandbox package raises."""


class InvalidRunRequestError(SandboxError, ValueError):
    """Raised when run() gets files or test files it cannot run (bad path, missing test file)."""


class RunnerClosedError(SandboxError):
    """Raised when run() is called on a runner after close()."""


class RunnerStartError(SandboxError):
    """Raised when the sandbox helper process cannot be started or does not answer."""
