"""Where a served call's time goes, seen from inside the server: `python -m bench._serve --trace`.

Installed only in a benchmark's server process (never by the service itself): it wraps a few
service functions with timers and samples the event loop's lag, so the scale section can split
a call's client-side latency into the server's share (queue, apply, store) and the rest (the
wire, gRPC, the client). The wrapped functions keep their behaviour; only time is measured.

- `loop_lag`: a task asks to wake every 5 ms and records how late it wakes; lateness is time
  the loop spent on something else in one go (a callback, a tool applied on the loop, a burst
  of messages, a garbage collection) or waiting for a CPU. `stall`: each lateness over 10 ms,
  and `stall_cpu`: how much of it the loop's thread spent running.
- `submit`: `Coordinator.submit` from entry to return: the session's queue, the apply and
  the store's commit, i.e. the server's own time for a call once its request is decoded.
- `apply`: `_apply_sync` (the simulator's work for the call, on the loop or in a thread).
- `flush`: `Session.flush` (waiting for the store's commit, from the caller's side).
- `store_wait`: a write's wait in the store's queue; `commit`: one store transaction in the
  writer thread, `commit_cpu` the writer's CPU in it, `commit_statements` its size.
- `threads`: each thread's CPU time and its time runnable but waiting for a CPU (from
  `/proc/self/task/*/schedstat`) in the window, the event loop's thread as `main`: CPU
  contention shows there; a thread waiting for the GIL does not (it sleeps).
- `gc0`, `gc1`, `gc2`: each pause of the cyclic garbage collector, by generation (it stops
  the thread that triggered it, and holds the GIL, so every thread waits).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.stats import median, pct

LAG_PERIOD = 0.005
"""Seconds the lag sampler asks to sleep."""


class Tracer:
    """Timers and the loop-lag sampler; `reset` starts a window, `report` summarises it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # the store writer thread times commits; gc re-enters
        self._samples: dict[str, list[float]] = {}
        self._sizes: list[int] = []
        self._since = time.perf_counter()
        self._lagger: asyncio.Task[None] | None = None
        self._gc_start = 0.0
        self._sched = _schedstat()
        self.missing: list[str] = []
        """Service functions `install` could not find (their timers stay empty)."""
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.add(f"gc{info['generation']}", (time.perf_counter() - self._gc_start) * 1000)

    def add(self, name: str, ms: float) -> None:
        with self._lock:
            self._samples.setdefault(name, []).append(ms)

    def reset(self) -> None:
        with self._lock:
            self._samples = {}
            self._sizes = []
            self._since = time.perf_counter()
            self._sched = _schedstat()

    def report(self) -> dict[str, Any]:
        with self._lock:
            samples, sizes = self._samples, self._sizes
            wall = time.perf_counter() - self._since
        out: dict[str, Any] = {"window_s": wall, "missing": list(self.missing)}
        for name, values in sorted(samples.items()):
            out[name] = {
                "n": len(values),
                "p50_ms": median(values),
                "p99_ms": pct(values, 0.99),
                "max_ms": max(values, default=0.0),
                "sum_ms": sum(values),
            }
        lag = samples.get("loop_lag", [])
        out["loop_lag"] = {
            **out.get("loop_lag", {}),
            "over_20ms": sum(1 for v in lag if v > 20),
            "share_late_over_10ms": sum(v for v in lag if v > 10) / 1000 / max(wall, 1e-9),
        }
        out["commit_batch"] = {"p50": median(sizes), "max": max(sizes, default=0)}
        threads: dict[str, dict[str, float]] = {}
        for tid, (name, cpu, wait) in sorted(_schedstat().items()):
            cpu0, wait0 = self._sched.get(tid, (name, 0, 0))[1:]
            if cpu - cpu0 > 1e6:  # skip threads that did nothing
                # The event loop runs on the main thread; gRPC's and the store's threads
                # mostly share the name "python", so the others go by name and id.
                key = "main" if tid == os.getpid() else f"{name}-{tid}"
                threads[key] = {"cpu_s": (cpu - cpu0) / 1e9, "runqueue_s": (wait - wait0) / 1e9}
        out["threads"] = threads
        return out

    def start_lag_sampler(self) -> None:
        self._lagger = asyncio.get_running_loop().create_task(self._sample_lag())

    async def _sample_lag(self) -> None:
        while True:
            t0, c0 = time.perf_counter(), time.thread_time()
            await asyncio.sleep(LAG_PERIOD)
            lag = max(0.0, (time.perf_counter() - t0 - LAG_PERIOD) * 1000)
            self.add("loop_lag", lag)
            if lag > 10:
                # How much of a stall the loop's thread spent running (its own work, a GC
                # pause) rather than waiting (for the GIL, for the CPU, in a blocking call).
                self.add("stall_cpu", (time.thread_time() - c0) * 1000)
                self.add("stall", lag + LAG_PERIOD * 1000)

    def install(self) -> None:
        """Wrap the service's functions with timers (call before the server is built).

        A function the service no longer has is skipped and named in the report's `missing`,
        so a renamed function empties one timer instead of stopping the benchmark.
        """
        from metasre.service.core import coordinator, session
        from metasre.service.store import sqlite as store

        self._wrap(coordinator.Coordinator, "submit", lambda fn: self._timed_async("submit", fn))
        self._wrap(session.Session, "flush", lambda fn: self._timed_async("flush", fn))
        self._wrap(coordinator, "_apply_sync", lambda fn: self._timed("apply", fn))
        self._wrap(store.TrajectoryStore, "_submit", self._stamped)
        self._wrap(store.TrajectoryStore, "_commit", self._commit_timed)

    def _wrap(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        fn = getattr(owner, name, None)
        if fn is None:
            self.missing.append(f"{owner.__name__}.{name}")
            return
        setattr(owner, name, make(fn))

    def _timed_async(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.add(name, (time.perf_counter() - t0) * 1000)

        return wrapper

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(name, (time.perf_counter() - t0) * 1000)

        return wrapper

    def _stamped(self, submit: Callable[..., Any]) -> Callable[..., Any]:
        """The store's submit, stamping each write's future with when it was queued."""

        @functools.wraps(submit)
        def wrapper(store: Any, ops: Any, *rest: Any) -> Any:
            done = submit(store, ops, *rest)
            done.bench_queued = time.perf_counter()
            return done

        return wrapper

    def _commit_timed(self, commit: Callable[..., Any]) -> Callable[..., Any]:
        """The store writer's commit of a batch: its wait in the queue, its time, its CPU."""

        @functools.wraps(commit)
        def wrapper(store: Any, conn: Any, batch: list[Any]) -> None:
            t0, c0 = time.perf_counter(), time.thread_time()
            for item in batch:  # (statements, future, ...)
                self.add("store_wait", (t0 - getattr(item[1], "bench_queued", t0)) * 1000)
            commit(store, conn, batch)
            self.add("commit", (time.perf_counter() - t0) * 1000)
            # The writer's own CPU: the rest of a commit is fsync and waiting for the GIL.
            self.add("commit_cpu", (time.thread_time() - c0) * 1000)
            self.add("commit_statements", float(sum(len(item[0]) for item in batch)))
            with self._lock:
                self._sizes.append(len(batch))

        return wrapper


def _schedstat() -> dict[int, tuple[str, int, int]]:
    """tid -> (name, ns on a CPU, ns runnable waiting for one) for each thread of this process."""
    out: dict[int, tuple[str, int, int]] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            cpu, wait = (task / "schedstat").read_text().split()[:2]
        except (OSError, ValueError):
            continue
        out[int(task.name)] = (name, int(cpu), int(wait))
    return out
