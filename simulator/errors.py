"""The simulator's exceptions: one base class and a flat list of subclasses."""

from __future__ import annotations

__all__ = [
    "EpisodeOverError",
    "FileNotFoundInTreeError",
    "HistoryError",
    "InvalidEditError",
    "InvalidToolCallError",
    "LineRangeError",
    "OperationError",
    "PathKindError",
    "PathOutsideTreeError",
    "ReadOnlyPathError",
    "SimulatorError",
    "UnknownToolError",
]


class SimulatorError(Exception):
    """Base class of every error the simulator raises on purpose."""


class PathOutsideTreeError(SimulatorError):
    """Raised when a path is malformed or points outside the scenario's code tree."""


class FileNotFoundInTreeError(SimulatorError):
    """Raised when a path names no file or directory in the episode's code tree."""


class PathKindError(SimulatorError):
    """Raised when a directory is given where a file is needed, or a file where a directory is."""


class ReadOnlyPathError(SimulatorError):
    """Raised when an edit targets a read-only path such as the visible tests."""


class LineRangeError(SimulatorError):
    """Raised when a line range does not fit the file it is applied to."""


class InvalidEditError(SimulatorError):
    """Raised when an edit's action, content or timestamp is malformed."""


class HistoryError(SimulatorError):
    """Raised when a commit history cannot be loaded or replayed into a code tree."""


class OperationError(SimulatorError):
    """Raised when an operation (rollback, restart, scale) does not fit the world's state."""


class InvalidToolCallError(SimulatorError, ValueError):
    """Raised when a tool call names no tool or its arguments fail the tool's schema.

    Such a call is refused before it reaches the world: it costs no step and no time.
    """

    def __init__(self, message: str, tool: str, violations: tuple[tuple[str, str], ...] = ()):
        super().__init__(message)
        self.tool = tool
        self.violations = violations
        """(field, description) pairs, one per bad argument."""


class UnknownToolError(InvalidToolCallError):
    """Raised when a tool call names a tool that does not exist."""

    def __init__(self, message: str, tool: str, choices: tuple[str, ...]):
        super().__init__(message, tool, (("tool", message),))
        self.choices = choices


class EpisodeOverError(SimulatorError):
    """Raised when a tool call arrives after the episode has ended."""
