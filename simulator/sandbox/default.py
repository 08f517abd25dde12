"""The process-wide shared runner: a cached fork server, started on first use."""

from __future__ import annotations

import atexit
import os
import threading

from .cache import CachingRunner
from .forkserver import ForkServerRunner
from .subprocess_runner import SubprocessRunner

__all__ = ["default_runner"]

_lock = threading.Lock()
_shared: CachingRunner | None = None


def default_runner() -> CachingRunner:
    """Return the shared ``CachingRunner(ForkServerRunner())`` of this process.

    Created on the first call; its helper starts on the first run (call ``.inner.start()``
    early, before any gRPC server exists, to pay the start-up up front) and is closed at
    exit. Where the fork server cannot work (no ``os.fork`` or ``os.pidfd_open``) the shared
    runner wraps a SubprocessRunner instead.
    """
    global _shared
    with _lock:
        if _shared is None:
            if hasattr(os, "fork") and hasattr(os, "pidfd_open"):
                _shared = CachingRunner(ForkServerRunner())
            else:
                _shared = CachingRunner(SubprocessRunner())
            atexit.register(_close_shared)
        return _shared


def _close_shared() -> None:
    global _shared
    with _lock:
        runner, _shared = _shared, None
    if runner is not None:
        runner.close()
