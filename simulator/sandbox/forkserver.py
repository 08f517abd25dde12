"""ForkServerRunner: runs test suites in children forked from a warm, sandboxed helper.

What is shared between runs, and why it is safe:

- Every run is a child forked from the helper, so it starts from the helper's memory: the
  preloaded standard library and the helper's own warm-up (synthetic files of its own). A
  child never returns anything into the helper but its report frames, which the helper only
  reads as a reply, and code texts (below); whatever a child changes dies with it.
- A *visible* helper (``purpose="visible"``, the agents' ``run_tests``) also keeps, with
  ``accelerate`` on: the bytecode this caller compiled for the files it was sent (keyed by
  path and content), and the code ``dataclasses``/``namedtuple`` generated from them (the
  helper compiles the text itself; a text maps to exactly what ``compile`` makes of it, so no
  run can change what another executes). A child is handed only the entries of its own
  files and abandons the rest unreachable. Nothing hidden is ever sent to a visible helper.
- A *grader* helper (``purpose="grader"``) keeps nothing: no accelerators, no learning from a
  child, and each child reads its request (the code and the probes) straight from the
  caller, so the helper never holds a probe. Its children's reports are observations that the
  caller judges against expected values no sandboxed process ever sees.
- The two helpers are different processes with different folders: nothing a grader run
  touched is ever used by a visible run.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import selectors
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

import structlog

from . import _host
from ._bytecode import compile_files, with_bytecode
from ._caller import check_request, crashed_report, probe_report_from_dict, report_from_dict
from .contract import RunnerState
from .errors import RunnerClosedError, RunnerStartError, WeakIsolationError, WrongRunnerError
from .helper.collector import RunCollector
from .helper.protocol import CONTROL_MAX, DEFAULT_PRELOAD, DONE, HEADER, make_request
from .limits import SandboxLimits
from .report import ProbeReport, RunReport

__all__ = ["ForkServerRunner"]

_log = structlog.get_logger(__name__)

_LESSON_BUDGET = CONTROL_MAX - 1024
"""Bytes of pyc per control message; a bigger pyc is simply never taught."""

_MAX_TAUGHT = 8192
"""pycs remembered as sent to the helper before the record starts over."""


class ForkServerRunner:
    """The fast TestRunner: one warm helper process forks a sandboxed child per run.

    The helper is a fresh ``python -P -s -S`` started with subprocess (never a fork of the
    caller, which may run gRPC threads). It preloads common standard modules, so a run costs a
    fork, materialising the files in a tmpfs folder, and the tests themselves. It also keeps
    the code of the files it has seen (the bytecode this runner compiled for them, and what
    dataclasses and namedtuple generated from them), so a run skips that work for every file
    an edit left unchanged; a run is handed only what came from its own files. Runs from
    several threads proceed concurrently, up to ``max_concurrency`` children at a time; more
    wait in the helper's queue (their wall clock starts when their child starts).

    If the helper dies it is restarted on the next run. Use as a context manager or call
    close(); start() is optional (the first run() starts the helper).

    A runner serves one purpose. A ``visible`` runner runs the agents' own test suites
    (``run``); a ``grader`` runner only calls hidden probes (``observe``), never learns
    anything from one run for the next (no accelerators), and so shares no process, cache or
    file with any visible run: each grader run is a child forked from a helper that has never
    executed a line of agent code and never holds a probe (the child reads its request itself).

    Containment fails closed: when Landlock or seccomp cannot be had on this machine, start()
    raises WeakIsolationError unless ``allow_weak_isolation`` is set, in which case the runner
    says so loudly in the log and in ``missing_layers``.

    Args:
        max_concurrency: Children running at once; defaults to the CPU count, at least 2.
        preload: Extra modules for the helper to import before serving.
        spares: Children forked ahead of demand, so the fork is off the critical path.
        rehearse: Let each spare rehearse a run at idle CPU priority while parked, so the
            pages a run dirties are already copied when a request arrives.
        netns_per_run: Give each run its own network namespace (about 1 ms per run here)
            instead of one empty namespace shared by all runs of this helper; runs are kept
            from reaching each other over the network by the audit hook either way.
        start_timeout_s: How long start() waits for the helper to report ready.
        purpose: ``visible`` (run), ``grader`` (observe the hidden probes, after an episode)
            or ``traffic`` (observe the world's production traffic during an episode): a
            traffic runner is configured exactly like a grader runner (no accelerators, the
            same probe path), so from inside, a grader run looks like a traffic run.
        accelerate: Keep what runs taught the helper (compiled bytecode, generated code) for
            later runs; defaults to on for a visible runner. A grader runner cannot have it.
        allow_weak_isolation: Run even where a required containment layer is missing.
    """

    def __init__(
        self,
        *,
        max_concurrency: int | None = None,
        preload: Sequence[str] = (),
        spares: int = 1,
        rehearse: bool = True,
        netns_per_run: bool = False,
        start_timeout_s: float = 60.0,
        purpose: Literal["visible", "grader", "traffic"] = "visible",
        accelerate: bool | None = None,
        allow_weak_isolation: bool = False,
    ) -> None:
        if purpose not in ("visible", "grader", "traffic"):
            raise ValueError(f"purpose must be 'visible', 'grader' or 'traffic', got {purpose!r}")
        if accelerate is None:
            accelerate = purpose == "visible"
        if accelerate and purpose != "visible":
            raise ValueError(
                f"a {purpose} runner cannot accelerate: its runs must not carry state between"
                " them, and must run like the grader's"
            )
        self._purpose = purpose
        self._accelerate = accelerate
        self._allow_weak = allow_weak_isolation
        concurrency = max_concurrency or max(2, os.cpu_count() or 2)
        if not 1 <= concurrency <= _host.UID_BLOCK:
            raise ValueError(
                f"max_concurrency must be between 1 and {_host.UID_BLOCK}, got {concurrency}"
            )
        self._max_concurrency = concurrency
        self._preload = tuple(dict.fromkeys((*DEFAULT_PRELOAD, *preload)))
        self._start_timeout_s = start_timeout_s
        if spares < 0:
            raise ValueError(f"spares must be >= 0, got {spares}")
        self._spares = spares
        self._rehearse = rehearse
        self._netns_per_run = netns_per_run
        self._lock = threading.Lock()
        self._state = RunnerState.NEW
        self._generation = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._base_dir: str | None = None
        self._uids: _host.UidBlock | None = None
        self._layers: tuple[str, ...] = ()
        self._missing: tuple[str, ...] = ()
        self._sequence = 0
        # keys of the pycs already sent to the helper of _taught_generation (see _lessons)
        self._taught: set[bytes] = set()
        self._taught_generation = 0

    @property
    def state(self) -> RunnerState:
        """Where the runner is in its lifecycle."""
        return self._state

    @property
    def isolation(self) -> tuple[str, ...]:
        """The isolation layers the helper could set up (empty until started)."""
        return self._layers

    @property
    def missing_layers(self) -> tuple[str, ...]:
        """Required containment layers this machine could not give (empty unless weak)."""
        return self._missing

    @property
    def purpose(self) -> str:
        """``visible``, ``grader`` or ``traffic``."""
        return self._purpose

    @property
    def helper_pid(self) -> int | None:
        """Process id of the helper, or None when it is not running."""
        return None if self._process is None else self._process.pid

    def __enter__(self) -> ForkServerRunner:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        """Start the helper now rather than on the first run.

        Raises:
            RunnerClosedError: if the runner was closed.
            RunnerStartError: if the helper did not come up.
        """
        self._ensure_started()

    def _ensure_started(self) -> tuple[socket.socket, int]:
        with self._lock:
            if self._state is RunnerState.CLOSED:
                raise RunnerClosedError("this ForkServerRunner was closed; create a new one")
            if self._state is RunnerState.NEW:
                self._spawn()
            assert self._control is not None
            return self._control, self._generation

    def _spawn(self) -> None:
        base = _host.make_base_dir()
        uids = _host.reserve_uid_block()
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {
            "control_fd": child.fileno(),
            "base_dir": base,
            "uid_base": None if uids is None else uids.first,
            "uid_count": _host.UID_BLOCK,
            "max_concurrency": self._max_concurrency,
            "preload": self._preload,
            "spares": self._spares,
            "rehearse": self._rehearse,
            "netns_per_run": self._netns_per_run,
            "accelerate": self._accelerate,
        }
        pass_fds = [child.fileno()] + ([] if uids is None else [uids.fd])
        process: subprocess.Popen[bytes] | None = None
        try:
            process = subprocess.Popen(
                _host.helper_command("server", json.dumps(config)),
                pass_fds=pass_fds,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=_host.HELPER_ENV,
                start_new_session=True,  # a terminal's Ctrl-C must not reach the helper
            )
            child.close()
            parent.settimeout(self._start_timeout_s)
            try:
                ready = json.loads(parent.recv(1 << 16) or b"null")
            except (OSError, ValueError) as exc:
                raise RunnerStartError(
                    f"the sandbox helper (pid {process.pid}) did not report ready within"
                    f" {self._start_timeout_s:g} s: {exc}; its stderr says why"
                ) from exc
            if not isinstance(ready, dict) or ready.get("t") != "ready":
                raise RunnerStartError(
                    f"the sandbox helper (pid {process.pid}) exited during start-up"
                    f" (exit code {process.poll()}); its stderr says why"
                )
            parent.settimeout(None)
            missing = tuple(str(layer) for layer in ready.get("missing", ()))
            if missing and not self._allow_weak:
                raise WeakIsolationError(
                    "the sandbox cannot contain agent code on this machine: missing "
                    + "; ".join(missing)
                    + ". Run where the kernel offers what is missing, or accept weaker isolation"
                    " explicitly (metasre serve"
                    " --allow-weak-isolation, ForkServerRunner(allow_weak_isolation=True))"
                )
        except BaseException:
            child.close()
            parent.close()
            if process is not None:
                _stop_process(process)
            _host.remove_tree(base)
            if uids is not None:
                uids.close()
            raise
        self._process, self._control, self._base_dir, self._uids = process, parent, base, uids
        self._layers = tuple(str(layer) for layer in ready.get("layers", ()))
        self._missing = missing
        if missing:
            _log.error(
                "sandbox running with WEAK isolation: agent code is not fully contained",
                missing=list(missing),
                purpose=self._purpose,
            )
        self._generation += 1
        self._state = RunnerState.RUNNING

    def _teardown(self) -> None:
        # caller holds the lock
        if self._control is not None:
            self._control.close()  # the helper sees EOF, kills its children and exits
            self._control = None
        if self._process is not None:
            _stop_process(self._process)
            self._process = None
        if self._base_dir is not None:
            _host.remove_tree(self._base_dir)
            self._base_dir = None
        if self._uids is not None:
            self._uids.close()
            self._uids = None

    def _helper_died(self, generation: int) -> None:
        with self._lock:
            if self._generation == generation and self._state is RunnerState.RUNNING:
                _log.warning(
                    "sandbox helper died; restarting it on the next run",
                    pid=None if self._process is None else self._process.pid,
                    generation=generation,
                )
                self._teardown()
                self._state = RunnerState.NEW

    def run(
        self,
        files: Mapping[str, bytes],
        test_files: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
        shared: Collection[str] = (),
    ) -> RunReport:
        """Run ``test_files`` against ``files`` in a fresh sandboxed child.

        Args:
            files: Normalised relative POSIX paths mapped to their content.
            test_files: Keys of ``files`` to run as test modules, in order.
            limits: Resource limits; ``SandboxLimits()`` when None.
            shared: Paths of ``files`` whose content every session has (the scenario as it
                shipped). Only what comes from these is kept in the helper for later runs;
                nothing of an agent's own edits outlives its run.

        Returns:
            The report. Timeouts, crashes and refused escapes are statuses, not exceptions.

        Raises:
            InvalidRunRequestError: if a path is not normalised or a test file is missing.
            RunnerClosedError: if the runner was closed.
            RunnerStartError: if the helper cannot be (re)started.
        """
        if self._purpose != "visible":
            raise WrongRunnerError(
                f"this runner serves {self._purpose} runs only (observe); visible suites run"
                " elsewhere"
            )
        check_request(files, test_files)
        limits = limits or SandboxLimits()
        payload: Mapping[str, bytes] = files
        keys: Mapping[str, bytes] = {}
        public: frozenset[bytes] = frozenset()
        lessons: Sequence[tuple[bytes, bytes]] = ()
        if self._accelerate:
            compiled = compile_files(files)
            payload, keys = compiled.files, compiled.keys
            public = frozenset(keys[p] for p in shared if p in keys)
            lessons = [(key, pyc) for key, pyc in compiled.lessons if key in public]
        frame_key = os.urandom(16)
        request = make_request(
            None,
            payload,
            limits.to_wire(),
            tests=test_files,
            keys=keys,
            strict=not self._allow_weak,
            frame_key=frame_key,
        )
        done = self._submit(request, frame_key, limits, lessons)
        if done is None:
            return _helper_lost()
        if public and done.codegen:
            self._teach_codegen(done.codegen, public)
        return done.report()

    def observe(
        self,
        files: Mapping[str, bytes],
        probe_file: str,
        probes: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
    ) -> ProbeReport:
        """Call the probes in a fresh child of the grader helper (see ProbeRunner.observe).

        A grader run's output is not kept at all.

        Raises:
            WrongRunnerError: if this is a visible runner; besides what ProbeRunner.observe
                raises, and RunnerStartError if the helper cannot be (re)started.
        """
        if self._purpose == "visible":
            raise WrongRunnerError(
                "probes never run in a visible runner; use a purpose='grader' (hidden checks)"
                " or purpose='traffic' (the world's production traffic) runner"
            )
        check_request(files, [probe_file])
        limits = limits or SandboxLimits()
        frame_key = os.urandom(16)
        # Bytecode compiled here, by the caller, and shipped in this request alone: nothing
        # of it stays in the helper, so grader runs still carry no state between them.
        request = make_request(
            None,
            with_bytecode(files),
            limits.to_wire(),
            probe_file=probe_file,
            probes=probes,
            strict=not self._allow_weak,
            frame_key=frame_key,
        )
        done = self._submit(request, frame_key, limits, ())
        if done is None:
            return ProbeReport("crashed", {}, _helper_lost().message)
        return probe_report_from_dict(done.raw)

    def _submit(
        self,
        request: bytes,
        frame_key: bytes,
        limits: SandboxLimits,
        lessons: Sequence[tuple[bytes, bytes]],
    ) -> _Finished | None:
        # generous: the helper answers every request unless it dies, which closes the socket
        patience = 120.0 + 50.0 * limits.wall_timeout_s
        for _attempt in range(2):
            control, generation = self._ensure_started()
            with self._lock:
                self._sequence += 1
                sequence = self._sequence
                base = self._base_dir or ""
            taught = self._lessons(generation, lessons) if lessons else []
            header = HEADER.pack(b"R", limits.wall_timeout_s, sequence)
            collector = RunCollector(
                frame_key,
                f"{base}/run-{sequence}",
                limits.wall_timeout_s,
                float(limits.cpu_seconds),
            )
            done = _exchange(control, header, request, collector, patience, taught, sequence)
            if done is not None:
                return done
            if self._state is RunnerState.CLOSED:
                raise RunnerClosedError("this ForkServerRunner was closed during the run")
            self._helper_died(generation)
        return None

    def _teach_codegen(self, texts: Sequence[object], public: frozenset[bytes]) -> None:
        """Send the helper the generated-code texts of shared files (see helper.accel.codegen)."""
        kept = [
            entry
            for entry in texts
            if isinstance(entry, list)
            and len(entry) == 3
            and isinstance(entry[0], str)
            and _hex_key(entry[0]) in public
        ]
        if not kept:
            return
        message = b"G" + marshal.dumps(kept)
        if len(message) > CONTROL_MAX:
            return  # too much at once: it is only a speed-up
        with self._lock:
            control = self._control
        if control is not None:
            with contextlib.suppress(OSError):
                control.send(message)

    def _lessons(self, generation: int, lessons: Sequence[tuple[bytes, bytes]]) -> list[bytes]:
        """Return control messages with the (key, pyc) pairs the helper has not had yet.

        The helper unmarshals them once and every child forked afterwards inherits the code,
        so runs after this one skip unmarshalling the modules an edit did not touch.
        """
        with self._lock:
            if self._taught_generation != generation:
                self._taught.clear()  # a restarted helper knows nothing
                self._taught_generation = generation
            new = [
                (key, pyc)
                for key, pyc in lessons
                if key not in self._taught and len(pyc) < _LESSON_BUDGET
            ]
            if len(self._taught) + len(new) > _MAX_TAUGHT:
                self._taught.clear()  # the helper drops its oldest too; resending is harmless
            self._taught.update(key for key, _pyc in new)
        messages: list[bytes] = []
        batch: list[tuple[bytes, bytes]] = []
        size = 0
        for key, pyc in new:
            if batch and size + len(pyc) > _LESSON_BUDGET:
                messages.append(b"C" + marshal.dumps(batch))
                batch, size = [], 0
            batch.append((key, pyc))
            size += len(key) + len(pyc) + 16  # marshal's per-item overhead, with room to spare
        if batch:
            messages.append(b"C" + marshal.dumps(batch))
        return messages

    def close(self) -> None:
        """Stop the helper, kill any run in flight and remove the run folders; idempotent."""
        with self._lock:
            self._state = RunnerState.CLOSED
            self._teardown()


def _helper_lost() -> RunReport:
    return crashed_report(
        "the sandbox helper process died twice during this run; it will be restarted"
    )


@dataclass(slots=True)
class _Finished:
    """A run as the caller collected it: the collector's verdict and what it heard."""

    raw: dict[str, Any]
    codegen: list[Any]

    def report(self) -> RunReport:
        return report_from_dict(self.raw)


def _hex_key(text: str) -> bytes | None:
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def _exchange(
    control: socket.socket,
    header: bytes,
    request: bytes,
    collector: RunCollector,
    patience: float,
    lessons: Sequence[bytes],
    sequence: int,
) -> _Finished | None:
    """Run one request: send it, collect the child's frames and output here, hear its exit.

    Returns:
        The collected run, or None if the helper is gone (the caller retries once).
    """
    report_r, report_w = os.pipe()
    output_r, output_w = os.pipe()
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            socket.send_fds(control, [header], [theirs.fileno(), report_w, output_w])
        except OSError:
            return None
        finally:
            theirs.close()
            os.close(report_w)
            os.close(output_w)
        with contextlib.suppress(OSError):
            # after the run request: its child starts while the helper learns, and the
            # helper forks its next spare only after learning (a lost lesson only costs time)
            for lesson in lessons:
                control.send(lesson)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            # the child reads this; if it died first the helper shuts the socket down
            mine.sendall(request)
        done = _collect(mine, report_r, output_r, collector, patience)
        if collector.end is not None:
            with contextlib.suppress(OSError):
                control.send(DONE.pack(b"D", sequence))
        return done
    finally:
        mine.close()
        os.close(report_r)
        os.close(output_r)


def _collect(
    mine: socket.socket,
    report_r: int,
    output_r: int,
    collector: RunCollector,
    patience: float,
) -> _Finished | None:
    for fd in (report_r, output_r):
        os.set_blocking(fd, False)
    mine.setblocking(False)
    exit_chunks: list[bytes] = []
    exited = False
    deadline = time.monotonic() + patience
    with selectors.DefaultSelector() as selector:
        selector.register(report_r, selectors.EVENT_READ, "report")
        selector.register(output_r, selectors.EVENT_READ, "output")
        selector.register(mine, selectors.EVENT_READ, "exit")
        while not exited:
            if collector.end is not None:
                # the child flushed its output before its last frame: answer now and let its
                # exit and the folder's removal happen off the caller's critical path
                _drain(output_r, collector.feed_output)
                return _Finished(collector.finish(None, 0.0, timed_out=False), collector.codegen)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return _Finished(
                    {
                        "status": "crashed",
                        "message": f"no answer from the sandbox helper within {patience:g} s",
                        "outcomes": [],
                        "output": "",
                    },
                    [],
                )
            for key, _mask in selector.select(remaining):
                if key.data == "report":
                    if not _read_some(report_r, collector.feed_report):
                        selector.unregister(report_r)
                elif key.data == "output":
                    if not _read_some(output_r, collector.feed_output):
                        selector.unregister(output_r)
                else:
                    try:
                        chunk = mine.recv(1 << 16)
                    except BlockingIOError:
                        continue
                    except OSError:
                        chunk = b""
                    if chunk:
                        exit_chunks.append(chunk)
                    else:
                        exited = True
    try:
        exit_message = json.loads(b"".join(exit_chunks))
    except ValueError:
        return None  # the helper died before it could say how the run ended
    if not isinstance(exit_message, dict):
        return None
    _drain(report_r, collector.feed_report)
    _drain(output_r, collector.feed_output)
    failure = str(exit_message.get("failure") or "")
    if failure:
        return _Finished(
            {"status": "crashed", "message": failure, "outcomes": [], "output": ""}, []
        )
    status = exit_message.get("wait_status")
    cpu = exit_message.get("cpu_seconds")
    raw = collector.finish(
        status if isinstance(status, int) else None,
        float(cpu) if isinstance(cpu, (int, float)) else 0.0,
        bool(exit_message.get("timed_out")),
    )
    return _Finished(raw, collector.codegen)


def _read_some(fd: int, feed: Callable[[bytes], None]) -> bool:
    """Read what is there; False at end of file."""
    try:
        data = os.read(fd, 1 << 20)
    except BlockingIOError:
        return True
    except OSError:
        return False
    if not data:
        return False
    feed(data)
    return True


def _drain(fd: int, feed: Callable[[bytes], None]) -> None:
    while True:
        try:
            data = os.read(fd, 1 << 20)
        except (BlockingIOError, OSError):
            return
        if not data:
            return
        feed(data)


def _stop_process(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
