"""SubprocessRunner: one fresh interpreter per run; the slow baseline and a portable fallback."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from types import TracebackType

from . import _host
from ._bytecode import with_bytecode
from ._caller import check_request, probe_report_from_dict, report_from_dict
from .contract import RunnerState
from .errors import RunnerClosedError
from .helper.collector import RunCollector
from .helper.protocol import ChildPlan, make_request
from .limits import SandboxLimits
from .report import ProbeReport, RunReport

__all__ = ["SubprocessRunner"]


class SubprocessRunner:
    """A TestRunner that starts ``python -P -s -S`` afresh for every run.

    Each run pays for a new interpreter (10-50 ms here) but shares nothing with earlier runs.
    The child applies the same isolation as ForkServerRunner's children, plus its own network
    (and, when needed, mount) namespace. Thread-safe; no helper process outlives a run. As
    nothing outlives a run, one runner may serve visible runs (``run``) and grader runs
    (``observe``) alike.

    Args:
        allow_weak_isolation: Let a run go on when Landlock or seccomp cannot be set up
            (by default such a run ends as crashed, saying which layer was missing).
    """

    def __init__(self, *, allow_weak_isolation: bool = False) -> None:
        self._strict = not allow_weak_isolation
        self._lock = threading.Lock()
        self._slots_free = threading.Condition(self._lock)
        self._state = RunnerState.NEW
        self._base_dir: str | None = None
        self._uids: _host.UidBlock | None = None
        self._free = list(range(_host.UID_BLOCK - 1, -1, -1))
        self._used: set[int] = set()
        self._sequence = 0

    @property
    def state(self) -> RunnerState:
        """Where the runner is in its lifecycle."""
        return self._state

    def __enter__(self) -> SubprocessRunner:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _acquire(self) -> tuple[int, str, int | None, str]:
        with self._slots_free:
            while True:
                if self._state is RunnerState.CLOSED:
                    raise RunnerClosedError("this SubprocessRunner was closed; create a new one")
                if self._state is RunnerState.NEW:
                    self._base_dir = _host.make_base_dir()
                    self._uids = _host.reserve_uid_block()
                    self._state = RunnerState.RUNNING
                if self._free:
                    break
                self._slots_free.wait()
            slot = self._free.pop()
            self._used.add(slot)
            self._sequence += 1
            assert self._base_dir is not None
            uid = None if self._uids is None else self._uids.first + slot
            return slot, f"{self._base_dir}/run-{self._sequence}", uid, self._base_dir

    def _release(self, slot: int) -> None:
        with self._slots_free:
            self._free.append(slot)
            self._slots_free.notify()

    def run(
        self,
        files: Mapping[str, bytes],
        test_files: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
        shared: Collection[str] = (),
    ) -> RunReport:
        """Run ``test_files`` against ``files`` in a fresh sandboxed interpreter.

        Args:
            files: Normalised relative POSIX paths mapped to their content.
            test_files: Keys of ``files`` to run as test modules, in order.
            limits: Resource limits; ``SandboxLimits()`` when None. The wall clock includes
                the interpreter's start-up.
            shared: Ignored: nothing outlives a run here.

        Returns:
            The report. Timeouts, crashes and refused escapes are statuses, not exceptions.

        Raises:
            InvalidRunRequestError: if a path is not normalised or a test file is missing.
            RunnerClosedError: if the runner was closed.
        """
        check_request(files, test_files)
        limits = limits or SandboxLimits()
        raw = self._in_slot(with_bytecode(files), limits, tests=tuple(test_files))
        return report_from_dict(raw)

    def observe(
        self,
        files: Mapping[str, bytes],
        probe_file: str,
        probes: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
    ) -> ProbeReport:
        """Call ``probes`` of ``probe_file`` in a fresh interpreter (see ForkServerRunner)."""
        check_request(files, [probe_file])
        limits = limits or SandboxLimits()
        raw = self._in_slot(
            with_bytecode(files), limits, probe_file=probe_file, probes=tuple(probes)
        )
        return probe_report_from_dict(raw)

    def _in_slot(
        self, files: Mapping[str, bytes], limits: SandboxLimits, **what: object
    ) -> dict[str, object]:
        slot, run_dir, uid, base_dir = self._acquire()
        try:
            return self._run(files, limits, run_dir, uid, base_dir, what)
        finally:
            _host.remove_tree(run_dir)
            self._release(slot)

    def _run(
        self,
        files: Mapping[str, bytes],
        limits: SandboxLimits,
        run_dir: str,
        uid: int | None,
        base_dir: str,
        what: Mapping[str, object],
    ) -> dict[str, object]:
        key = os.urandom(16)
        request_r, request_w = os.pipe()
        report_r, report_w = os.pipe()
        plan = ChildPlan(
            request_fd=request_r,
            report_fd=report_w,
            output_fd=1,
            run_dir=run_dir,
            uid=uid,
            new_namespaces=True,
            scratch_dir=base_dir,
        )
        request = make_request(
            plan,
            files,
            limits.to_wire(),
            strict=self._strict,
            frame_key=key,
            **what,  # type: ignore[arg-type]
        )
        try:
            process = subprocess.Popen(
                _host.helper_command("child", str(request_r), str(report_w)),
                pass_fds=(request_r, report_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=_host.HELPER_ENV,
                start_new_session=True,
            )
        except BaseException:
            for fd in (request_r, request_w, report_r, report_w):
                os.close(fd)
            raise
        os.close(request_r)
        os.close(report_w)
        collector = RunCollector(key, run_dir, limits.wall_timeout_s, float(limits.cpu_seconds))
        assert process.stdout is not None
        try:
            status, cpu_time, timed_out = _supervise(
                process, request, request_w, report_r, collector, limits.wall_timeout_s
            )
        finally:
            with contextlib.suppress(OSError):
                os.close(request_w)
            os.close(report_r)
            process.stdout.close()
        return collector.finish(status, cpu_time, timed_out)

    def close(self) -> None:
        """Mark the runner closed and kill any process left in its uids; idempotent."""
        with self._lock:
            if self._state is RunnerState.CLOSED:
                return
            self._state = RunnerState.CLOSED
            self._slots_free.notify_all()
            uids, base, used = self._uids, self._base_dir, sorted(self._used)
            self._uids = self._base_dir = None
        if uids is not None:
            # setresuid would switch every thread of this process: borrow uids elsewhere
            subprocess.run(
                _host.helper_command("isolation", *(str(uids.first + s) for s in used)),
                env=_host.HELPER_ENV,
                stdin=subprocess.DEVNULL,
                check=False,
                timeout=30,
            )
            uids.close()
        if base is not None:
            _host.remove_tree(base)


def _supervise(
    process: subprocess.Popen[bytes],
    request: bytes,
    request_w: int,
    report_r: int,
    collector: RunCollector,
    wall_timeout_s: float,
) -> tuple[int | None, float, bool]:
    """Feed the request, collect report and output, enforce the wall clock, reap the child."""
    assert process.stdout is not None
    output_r = process.stdout.fileno()
    for fd in (request_w, report_r, output_r):
        os.set_blocking(fd, False)
    try:
        pidfd: int | None = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        pidfd = None
    pending = memoryview(request)
    deadline = time.monotonic() + wall_timeout_s
    timed_out = False
    exited = False
    with selectors.DefaultSelector() as selector:
        selector.register(request_w, selectors.EVENT_WRITE, "request")
        selector.register(report_r, selectors.EVENT_READ, "report")
        selector.register(output_r, selectors.EVENT_READ, "output")
        if pidfd is not None:
            selector.register(pidfd, selectors.EVENT_READ, "exit")
        while not exited:
            timeout = None if timed_out else max(0.0, deadline - time.monotonic())
            if pidfd is None:
                timeout = 0.005 if timeout is None else min(timeout, 0.005)
            for key, _mask in selector.select(timeout):
                if key.data == "request":
                    try:
                        pending = pending[os.write(request_w, pending) :]
                    except BlockingIOError:
                        pass
                    except BrokenPipeError:
                        pending = pending[:0]  # the child died before reading it all
                    if not pending:
                        selector.unregister(request_w)
                elif key.data == "exit":
                    exited = True
                else:
                    _read(key.fd, key.data, collector)
            if pidfd is None:
                exited = exited or _exited(process.pid)
            if not timed_out and not exited and time.monotonic() >= deadline:
                timed_out = True
                _kill_group(process.pid)
            if collector.end is not None and not exited:
                # the child has said everything; do not wait for its interpreter to unwind
                _kill_group(process.pid)
    if pidfd is not None:
        os.close(pidfd)
    status: int | None = None
    cpu_time = 0.0
    try:
        _, status, usage = os.wait4(process.pid, 0)
        cpu_time = usage.ru_utime + usage.ru_stime
        process.returncode = os.waitstatus_to_exitcode(status)
    except ChildProcessError:
        process.wait()
    _kill_group(process.pid)
    _read(report_r, "report", collector)
    _read(output_r, "output", collector)
    return status, cpu_time, timed_out


def _exited(pid: int) -> bool:
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _read(fd: int, which: str, collector: RunCollector) -> None:
    while True:
        try:
            data = os.read(fd, 1 << 20)
        except (BlockingIOError, OSError):
            return
        if not data:
            return
        if which == "report":
            collector.feed_report(data)
        else:
            collector.feed_output(data)


def _kill_group(pid: int) -> None:
    for target in (-pid, pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)
