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
import signal
import socket
import subprocess
import threading
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Literal

import structlog

from . import _host
from ._bytecode import compile_files, with_bytecode
from ._caller import check_request, crashed_report, decode_response, probe_report_from_dict
from .contract import RunnerState
from .errors import RunnerClosedError, RunnerStartError, WeakIsolationError, WrongRunnerError
from .helper.protocol import CONTROL_MAX, DEFAULT_PRELOAD, HEADER, make_request
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
        purpose: ``visible`` (run) or ``grader`` (observe).
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
        purpose: Literal["visible", "grader"] = "visible",
        accelerate: bool | None = None,
        allow_weak_isolation: bool = False,
    ) -> None:
        if purpose not in ("visible", "grader"):
            raise ValueError(f"purpose must be 'visible' or 'grader', got {purpose!r}")
        if accelerate is None:
            accelerate = purpose == "visible"
        if accelerate and purpose == "grader":
            raise ValueError(
                "a grader runner cannot accelerate: its runs must not carry state between them"
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
        """``visible`` or ``grader``."""
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
    ) -> RunReport:
        """Run ``test_files`` against ``files`` in a fresh sandboxed child.

        Args:
            files: Normalised relative POSIX paths mapped to their content.
            test_files: Keys of ``files`` to run as test modules, in order.
            limits: Resource limits; ``SandboxLimits()`` when None.

        Returns:
            The report. Timeouts, crashes and refused escapes are statuses, not exceptions.

        Raises:
            InvalidRunRequestError: if a path is not normalised or a test file is missing.
            RunnerClosedError: if the runner was closed.
            RunnerStartError: if the helper cannot be (re)started.
        """
        if self._purpose != "visible":
            raise WrongRunnerError(
                "this runner serves grader runs only (observe); visible suites run elsewhere"
            )
        check_request(files, test_files)
        limits = limits or SandboxLimits()
        payload: Mapping[str, bytes] = files
        keys: Mapping[str, bytes] = {}
        lessons: Sequence[tuple[bytes, bytes]] = ()
        if self._accelerate:
            compiled = compile_files(files)
            payload, keys, lessons = compiled.files, compiled.keys, compiled.lessons
        request = make_request(
            None,
            payload,
            limits.to_wire(),
            tests=test_files,
            keys=keys,
            strict=not self._allow_weak,
        )
        answer = self._submit(request, limits, lessons)
        return decode_response(answer) if answer is not None else _helper_lost()

    def observe(
        self,
        files: Mapping[str, bytes],
        probe_file: str,
        probes: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
    ) -> ProbeReport:
        """Call ``probes`` of ``probe_file`` (a key of ``files``) in a fresh sandboxed child.

        Returns:
            What each probe returned, as JSON text, by name. A grader run's output is not kept.

        Raises:
            WrongRunnerError: if this is a visible runner.
            InvalidRunRequestError: if a path is not normalised or the probe file is missing.
            RunnerClosedError: if the runner was closed.
            RunnerStartError: if the helper cannot be (re)started.
        """
        if self._purpose != "grader":
            raise WrongRunnerError(
                "hidden probes never run in a visible runner; use a purpose='grader' runner"
            )
        check_request(files, [probe_file])
        limits = limits or SandboxLimits()
        # Bytecode compiled here, by the caller, and shipped in this request alone: nothing
        # of it stays in the helper, so grader runs still carry no state between them.
        request = make_request(
            None,
            with_bytecode(files),
            limits.to_wire(),
            probe_file=probe_file,
            probes=probes,
            strict=not self._allow_weak,
        )
        answer = self._submit(request, limits, ())
        if answer is None:
            return ProbeReport("crashed", {}, _helper_lost().message)
        return probe_report_from_dict(json.loads(answer))

    def _submit(
        self, request: bytes, limits: SandboxLimits, lessons: Sequence[tuple[bytes, bytes]]
    ) -> bytes | None:
        header = HEADER.pack(b"R", limits.wall_timeout_s, float(limits.cpu_seconds))
        # generous: the helper answers every request unless it dies, which closes the socket
        patience = 120.0 + 50.0 * limits.wall_timeout_s
        for _attempt in range(2):
            control, generation = self._ensure_started()
            taught = self._lessons(generation, lessons) if lessons else []
            answer = _exchange(control, header, request, patience, taught)
            if answer is not None:
                return answer
            if self._state is RunnerState.CLOSED:
                raise RunnerClosedError("this ForkServerRunner was closed during the run")
            self._helper_died(generation)
        return None

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


def _exchange(
    control: socket.socket,
    header: bytes,
    request: bytes,
    patience: float,
    lessons: Sequence[bytes] = (),
) -> bytes | None:
    """Send one request, then any lessons; return the response, or None if the helper is gone."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with mine:
        try:
            socket.send_fds(control, [header], [theirs.fileno()])
        except OSError:
            return None
        finally:
            theirs.close()
        with contextlib.suppress(OSError):
            # after the run request: its child starts while the helper learns, and the
            # helper forks its next spare only after learning (a lost lesson only costs time)
            for lesson in lessons:
                control.send(lesson)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            # the child reads this; if it died first the helper shuts the socket down
            mine.sendall(request)
        mine.settimeout(patience)
        chunks: list[bytes] = []
        try:
            while chunk := mine.recv(1 << 16):
                chunks.append(chunk)
        except TimeoutError:
            return json.dumps(
                {
                    "status": "crashed",
                    "message": f"no answer from the sandbox helper within {patience:g} s",
                    "outcomes": [],
                    "output": "",
                }
            ).encode()
        except OSError:
            return None
    return b"".join(chunks) or None


def _stop_process(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
