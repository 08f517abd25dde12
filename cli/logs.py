"""Where and how the command line logs: stderr, for people on a terminal, JSON elsewhere.

stdout stays for what a command prints (tables, --json, serve's address line). `metasre serve`
logs at info; every other command logs warnings only, the server it may start in process
included, so that its progress bar and play-by-play stay readable; -v is debug for all.
"""

from __future__ import annotations

import logging
import sys

import structlog


def renders_json(log_format: str) -> bool:
    """True for `json`, and for `auto` when stderr is not a terminal (a file, a collector)."""
    if log_format == "auto":
        return not sys.stderr.isatty()
    return log_format == "json"


def configure(level: int, log_format: str = "auto", *, once: bool = False) -> None:
    """Log at `level` and above on stderr, as `console`, `json` or `auto`.

    `once`: nothing will configure logging again in this process, so each logger is built on
    its first use and kept, rather than rebuilt by structlog's proxy on every call and bind
    (about 6 us each).
    """
    renderer: structlog.typing.Processor
    if renders_json(log_format):
        timestamp = structlog.processors.TimeStamper(fmt="iso")
        # Tracebacks as JSON, without frame locals: those would carry the failing call's tokens.
        exceptions: list[structlog.typing.Processor] = [
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            )
        ]
        renderer = structlog.processors.JSONRenderer()
    else:
        timestamp = structlog.processors.TimeStamper(fmt="%H:%M:%S", utc=False)
        exceptions = []
        # plain_traceback: the rich one would print frame locals, tokens among them.
        renderer = structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            timestamp,
            *exceptions,
            renderer,
        ],
        # sys.stderr as it is when a logger is made, not as it was now: whoever swaps it later
        # (pytest's capture, a caller's redirect) must not leave loggers on a closed file.
        logger_factory=lambda *args: structlog.PrintLogger(sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(level),
        cache_logger_on_first_use=once,
    )


def level_for(command: str, verbose: bool) -> int:
    """Debug with -v; info for `serve`; warnings only for the rest."""
    if verbose:
        return logging.DEBUG
    return logging.INFO if command == "serve" else logging.WARNING
