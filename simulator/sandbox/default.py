"""The process-wide shared runner: a cached fork server, started on first use."""

from __future__ import annotations

import atexit
import os
import threading
from dataclasses import dataclass

from .cache import CachingRunner
from .contract import ProbeRunner
from .forkserver import ForkServerRunner
from .subprocess_runner import SubprocessRunner

__all__ = [
    "Isolation",
    "allow_weak_isolation",
    "default_grader_runner",
    "default_runner",
    "default_traffic_runner",
    "isolation",
]

_lock = threading.Lock()
_shared: CachingRunner | None = None
_grader: ProbeRunner | None = None
_traffic: ProbeRunner | None = None
_allow_weak = False


@dataclass(frozen=True, slots=True)
class Isolation:
    """How the shared runners contain agent code, as their helpers reported it."""

    layers: tuple[str, ...]
    """The layers in force, one line each."""
    missing: tuple[str, ...]
    """Required layers this machine could not give (empty unless weak isolation is allowed)."""
    weak_allowed: bool
    """The operator explicitly allowed running with missing layers."""


def allow_weak_isolation(allowed: bool) -> None:
    """Choose, before the shared runners exist, whether they may run with missing layers.

    Raises:
        RuntimeError: a shared runner already exists with the other choice.
    """
    global _allow_weak
    with _lock:
        started = _shared is not None or _grader is not None or _traffic is not None
        if started and allowed != _allow_weak:
            raise RuntimeError(
                "the shared sandbox runners already exist; choose weak isolation before first use"
            )
        _allow_weak = allowed


def isolation() -> Isolation:
    """Return the containment of the shared runners (started ones; empty before first use)."""
    layers: list[str] = []
    missing: list[str] = []
    for runner in (_shared.inner if _shared is not None else None, _grader, _traffic):
        for layer in getattr(runner, "isolation", ()):
            if layer not in layers:
                layers.append(layer)
        for layer in getattr(runner, "missing_layers", ()):
            if layer not in missing:
                missing.append(layer)
    return Isolation(tuple(layers), tuple(missing), _allow_weak)


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
                _shared = CachingRunner(ForkServerRunner(allow_weak_isolation=_allow_weak))
            else:
                _shared = CachingRunner(SubprocessRunner(allow_weak_isolation=_allow_weak))
            if _grader is None and _traffic is None:
                atexit.register(_close_shared)
        return _shared


def default_grader_runner() -> ProbeRunner:
    """Return the shared grader runner of this process: ``ForkServerRunner(purpose="grader")``.

    Its own helper, apart from the visible runner's, with no accelerators: no process, cache
    or file of it is ever used by a visible run. A SubprocessRunner (nothing outlives a run)
    where the fork server cannot work. Nothing is cached here: the grader keeps observations
    on the trusted side (``metasre.simulator.hidden``).
    """
    global _grader
    with _lock:
        if _grader is None:
            if hasattr(os, "fork") and hasattr(os, "pidfd_open"):
                _grader = ForkServerRunner(purpose="grader", allow_weak_isolation=_allow_weak)
            else:
                _grader = SubprocessRunner(allow_weak_isolation=_allow_weak)
            if _shared is None and _traffic is None:
                atexit.register(_close_shared)
        return _grader


def default_traffic_runner() -> ProbeRunner:
    """Return the shared traffic runner: ``ForkServerRunner(purpose="traffic")``.

    The world's production traffic (``metasre.simulator.traffic``) runs here while an
    episode goes on: a helper of its own, apart from the grader's (which serves only after an
    episode ends) and configured like it, so a probe run looks the same from inside whichever
    of the two forked it. A SubprocessRunner where the fork server cannot work.
    """
    global _traffic
    with _lock:
        if _traffic is None:
            if hasattr(os, "fork") and hasattr(os, "pidfd_open"):
                _traffic = ForkServerRunner(purpose="traffic", allow_weak_isolation=_allow_weak)
            else:
                _traffic = SubprocessRunner(allow_weak_isolation=_allow_weak)
            if _shared is None and _grader is None:
                atexit.register(_close_shared)
        return _traffic


def _close_shared() -> None:
    global _shared, _grader, _traffic
    with _lock:
        runners, _shared, _grader, _traffic = (_shared, _grader, _traffic), None, None, None
    for runner in runners:
        if runner is not None:
            runner.close()
