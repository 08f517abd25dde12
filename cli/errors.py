"""What the command line reports as one line and an exit code instead of a traceback.

The exit codes are part of the interface (scripts retry on UNREACHABLE, not on USAGE); README's
"Exit codes" table and `metasre --help` list them from `ExitCode`.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """How a `metasre` command ended."""

    OK = 0
    """It did what was asked, and the verdict is yes."""
    FAILED = 1
    """It ran, and the verdict is no: an episode not graded, a scenario invalid, unhealthy."""
    USAGE = 2
    """A flag's value cannot work (argparse's own errors use 2 as well)."""
    REFUSED = 3
    """The server refused a request: a missing or wrong token, a limit, a bad argument."""
    STORE_IN_USE = 4
    """Another server holds the trajectory store (its lock, `metasre.service.store.lock`)."""
    ADDRESS_IN_USE = 5
    """The address to serve on is taken by another process."""
    STORE = 6
    """The trajectory store cannot be opened, created or written."""
    OUTPUT = 7
    """An output file cannot be written."""
    SANDBOX = 8
    """The sandbox cannot contain agent code as required on this kernel."""
    LLM_ENDPOINT = 9
    """The model's endpoint cannot be reached or answers with errors."""
    UNREACHABLE = 10
    """Nothing answers at the target: no server there, or a TLS mismatch."""
    INTERRUPTED = 130
    """Ctrl-C: what had finished is reported; 128 + SIGINT, as shells do."""


EXIT_CODE_HELP = {
    ExitCode.OK: "done, verdict ok",
    ExitCode.FAILED: "done, verdict failed (episode not graded, scenario invalid, unhealthy)",
    ExitCode.USAGE: "bad flag or value (unknown scenario, bad --seeds, nothing to do)",
    ExitCode.REFUSED: "the server refused (token missing or wrong, a limit)",
    ExitCode.STORE_IN_USE: "another server holds the trajectory store",
    ExitCode.ADDRESS_IN_USE: "the port to serve on is taken",
    ExitCode.STORE: "the trajectory store cannot be opened or written",
    ExitCode.OUTPUT: "an output file cannot be written",
    ExitCode.SANDBOX: "the sandbox cannot be made as strict as required",
    ExitCode.LLM_ENDPOINT: "the model endpoint fails",
    ExitCode.UNREACHABLE: "nothing answers at --target",
    ExitCode.INTERRUPTED: "interrupted by Ctrl-C (partial results printed)",
}
"""One line per exit code, for `metasre --help`."""


class CommandError(Exception):
    """Base class: a condition the user must fix; `main` prints it as one line and exits."""

    code = ExitCode.USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(CommandError):
    """Raised when a flag's value cannot work (an unknown scenario, a URL with no scheme)."""

    code = ExitCode.USAGE


class RefusedError(CommandError):
    """Raised when the server refused a request (a token, a limit, a bad argument)."""

    code = ExitCode.REFUSED


class UnreachableError(CommandError):
    """Raised when nothing answers at the target."""

    code = ExitCode.UNREACHABLE


class AddressInUseError(CommandError):
    """Raised when the address to serve on is taken."""

    code = ExitCode.ADDRESS_IN_USE


class StoreInUseError(CommandError):
    """Raised when another server holds the trajectory store."""

    code = ExitCode.STORE_IN_USE


class StoreUnusableError(CommandError):
    """Raised when the trajectory store cannot be opened, created or written."""

    code = ExitCode.STORE


class OutputError(CommandError):
    """Raised when an output file cannot be written."""

    code = ExitCode.OUTPUT


class SandboxError(CommandError):
    """Raised when the sandbox cannot contain agent code as strictly as required."""

    code = ExitCode.SANDBOX


class EndpointError(CommandError):
    """Raised when the LLM endpoint cannot be reached or answers with errors."""

    code = ExitCode.LLM_ENDPOINT
