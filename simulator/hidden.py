"""Hidden checks, judged on the trusted side: probes observe in a sandbox, the verdict is made here.

A scenario's hidden checks are probes (``hidden/probes.py``): functions that call the services'
code on fixed inputs and return plain data. A grader run calls them in a sandboxed child and
sends back only what they returned. The expected value of each probe is what it returns on
the *reference world* (the scenario's solution applied), observed once per scenario and seed
in a sandbox that never held agent code, and kept here, in this process; it never enters a
sandboxed process, a cache of the sandbox or a file. A check passes when its observation
equals the reference's, compared as canonical JSON. Code under test can make its process say
anything, but to pass it must say what the fixed code says: that is the fix.

What is kept between episodes, and why it is safe: the reference observations per (scenario,
seed) (trusted: computed from our own solution, in a child forked from a helper that never ran
agent code), and the observations of agent code per content (a deterministic function of the
files, so another episode with the same files would observe the same). Neither is ever shown
to an agent; the grade says only which checks pass.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence

from .errors import SimulatorError
from .lru import Lru
from .probe_calls import PROBE_PATH, probe_functions, shipped_source
from .sandbox import ProbeReport, ProbeRunner, default_grader_runner
from .scenarios.loader import ScenarioInstance

__all__ = [
    "GUESSES",
    "HiddenCheckError",
    "HiddenChecks",
    "canonical",
    "grading_cost",
    "guessable",
]

_REFERENCES_KEPT = 512
_OBSERVATIONS_KEPT = 2048


class HiddenCheckError(SimulatorError):
    """Raised when the reference world cannot be observed, so nothing could be graded."""


def canonical(text: str | None) -> str | None:
    """Return ``text`` as canonical JSON (sorted keys, no spaces), None if it is not JSON."""
    if text is None:
        return None
    try:
        return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return None


_BLIND: tuple[object, ...] = (
    None, True, False, 0, 1, -1, 0.0, 1.0, "", [], {}, [[]], [{}],
    200, 201, 204, 400, 404, 500, 502, 503, "ok", "OK", "passed", "pass", "true", "None",
    {"status": 200}, {"ok": True}, {"passed": True}, {"status": "ok"},
)  # fmt: skip
GUESSES: frozenset[str] = frozenset(
    json.dumps(blind, sort_keys=True, separators=(",", ":")) for blind in _BLIND
)
"""Observations code under test could return blind. A FAIL_TO_PASS probe must expect none of
them (`metasre validate` proves it), or forging its observation would need no fix."""


def guessable(observation: str) -> bool:
    """Whether code under test could produce ``observation`` (canonical JSON) without a fix.

    A blind guess (GUESSES), or an exception type alone: both need no knowledge of the answer.
    """
    if observation in GUESSES:
        return True
    value: object = json.loads(observation)
    return isinstance(value, dict) and set(value) <= {"raised", "unserialisable", "too_long"}


def _probes_by_file(ids: Sequence[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for check in ids:
        path, _, name = check.partition("::")
        grouped.setdefault(path, []).append(name)
    return grouped


def _with_probes(instance: ScenarioInstance, files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The world's files and the probe modules: what a grader run's observations depend on.

    Only a key and a memo are made of it; a run gets ``_run_files``.
    """
    runtime = dict(files)
    runtime.update(instance.hidden_files)
    return runtime


def _run_files(
    instance: ScenarioInstance, runtime: Mapping[str, bytes], probe_file: str
) -> dict[str, bytes]:
    """What one grader run gets: the world's files and one probe module, as a traffic run would.

    No other hidden file (the traffic module, other probe modules), and the probe module at
    the neutral path with its prose gone (``metasre.simulator.probe_calls``).
    """
    files = {p: c for p, c in runtime.items() if p not in instance.hidden_files}
    files[PROBE_PATH] = shipped_source(instance.hidden_files[probe_file])
    return files


def _without_broken(
    observation: str | None, probe_file: str, fail_to_pass: frozenset[str]
) -> str | None:
    """A PASS_TO_PASS observation with the entries of this seed's FAIL_TO_PASS probes left out.

    A family's `*_unchanged` probe observes every site of a service as one object keyed by
    probe name. Which of them this seed broke is decided here, on the trusted side, rather
    than written into the probe module a run can read.
    """
    if observation is None:
        return None
    value: object = json.loads(observation)
    if not isinstance(value, dict):
        return observation
    kept = {k: v for k, v in value.items() if f"{probe_file}::{k}" not in fail_to_pass}
    return json.dumps(kept, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _content_key(files: Mapping[str, bytes], ids: Sequence[str]) -> bytes:
    digest = hashlib.sha256(b"metasre-hidden-v1\0")
    for path in sorted(files):
        encoded, content = path.encode(), files[path]
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
        digest.update(len(content).to_bytes(8, "big") + content)
    for check in ids:
        digest.update(check.encode() + b"\0")
    return digest.digest()


class HiddenChecks:
    """Runs a scenario's probes through a grader runner and judges them against the reference.

    Thread-safe; one instance serves every episode of a process.

    Args:
        runner: The grader runner (``purpose="grader"``); the shared one when None.
    """

    def __init__(self, runner: ProbeRunner | None = None) -> None:
        self._runner = runner
        self._lock = threading.Lock()
        self._references: Lru[tuple[str, int], dict[str, str]] = Lru(_REFERENCES_KEPT)
        """(scenario id, seed) -> the reference world's observation of every probe."""
        self._reference_locks: dict[tuple[str, int], threading.Lock] = {}
        self._worlds: Lru[tuple[str, int], tuple[bytes, dict[str, bytes]]] = Lru(_REFERENCES_KEPT)
        """(scenario id, seed) -> the reference world's code with the probes, and its key:
        built once, for the shortcut and for the reference run alike."""
        self._observed: Lru[bytes, dict[str, str | None]] = Lru(_OBSERVATIONS_KEPT)

    def clear(self) -> None:
        """Forget every observation and reference kept (see `Catalog.reload`)."""
        with self._lock:
            self._references.clear()
            self._worlds.clear()
            self._observed.clear()

    @property
    def runner(self) -> ProbeRunner:
        """The grader runner probes run in."""
        if self._runner is None:
            self._runner = default_grader_runner()
        return self._runner

    def observe(
        self, instance: ScenarioInstance, files: Mapping[str, bytes]
    ) -> dict[str, str | None]:
        """Return what every hidden probe observes on ``files``, canonical JSON by check id.

        A probe that did not report (the run crashed, timed out, or was refused) maps to None.
        """
        ids = self._ids(instance)
        if not ids:
            return {}
        runtime = _with_probes(instance, files)
        return self._observe(instance, runtime, _content_key(runtime, ids))

    def _observe(
        self, instance: ScenarioInstance, runtime: Mapping[str, bytes], key: bytes
    ) -> dict[str, str | None]:
        ids = self._ids(instance)
        found = self._observed.get(key)
        if found is not None:
            return dict(found)
        observed: dict[str, str | None] = {}
        complete = True
        for path, names in _probes_by_file(ids).items():
            # every probe of the module, whichever this seed's checks read (probe_functions)
            called = sorted(set(probe_functions(instance.hidden_files[path])) | set(names))
            report: ProbeReport = self.runner.observe(
                _run_files(instance, runtime, path), PROBE_PATH, called
            )
            complete = complete and report.status in ("completed", "sandbox_violation")
            # a run that tried to leave its sandbox, or tampered with its report, says
            # nothing that counts: every check of it fails
            trusted = report.status == "completed"
            for name in names:
                text = report.observation(name) if trusted else None
                observed[f"{path}::{name}"] = canonical(text)
        if complete:
            # a timeout or a crash can depend on the machine's load: those are not kept
            self._observed.put(key, observed)
        return observed

    def expected(
        self, instance: ScenarioInstance, reference_files: Callable[[], Mapping[str, bytes]]
    ) -> dict[str, str]:
        """Return the reference world's observation of every probe, by check id.

        Args:
            instance: The scenario and seed.
            reference_files: Builds the reference world's files (the solution applied); called
                at most once per scenario and seed while the memo keeps it (verdict's shortcut
                uses the same build).

        Raises:
            HiddenCheckError: a probe did not report on the reference world.
        """
        key = (instance.spec.id, instance.seed)
        with self._lock:
            found = self._references.get(key)
            if found is not None:
                return found
            lock = self._reference_locks.setdefault(key, threading.Lock())
        with lock:  # one reference run per instance, however many episodes ask at once
            found = self._references.peek(key)
            if found is not None:
                return found
            world_key, world = self._reference_world(instance, reference_files)
            observed = self._observe(instance, world, world_key)
            if any(value is None for value in observed.values()):
                # our own code timing out is the machine's load, not the scenario: once more
                observed = self._observe(instance, world, world_key)
            missing = sorted(check for check, value in observed.items() if value is None)
            if missing:
                raise HiddenCheckError(
                    f"{instance.spec.id} seed {instance.seed}: the reference solution's world"
                    f" gave no observation for {missing}; the scenario's probes or solution"
                    " are broken (metasre validate names the cause)"
                )
            reference = {check: value for check, value in observed.items() if value is not None}
            with self._lock:
                self._references.put(key, reference)
                self._reference_locks.pop(key, None)
            return reference

    def verdict(
        self,
        instance: ScenarioInstance,
        files: Mapping[str, bytes],
        reference_files: Callable[[], Mapping[str, bytes]],
    ) -> dict[str, bool]:
        """Return, per check id, whether ``files`` observe what the reference world observes.

        Code identical to the reference world's passes every check without a run: a probe is
        a function of the files (validate proves each deterministic), so it could only
        observe what the reference observes. Most operational incidents leave the code as it
        was, which is the reference's code too.
        """
        ids = self._ids(instance)
        if not ids:
            return {}
        runtime = _with_probes(instance, files)
        key = _content_key(runtime, ids)
        if key == self._reference_world(instance, reference_files)[0]:
            return dict.fromkeys(ids, True)
        expected = self.expected(instance, reference_files)
        observed = self._observe(instance, runtime, key)
        hidden = instance.spec.hidden
        broken = frozenset(hidden.fail_to_pass)
        verdict = {check: observed.get(check) == expected[check] for check in hidden.fail_to_pass}
        for check in hidden.pass_to_pass:
            path = check.partition("::")[0]
            verdict[check] = _without_broken(observed.get(check), path, broken) == (
                _without_broken(expected[check], path, broken)
            )
        return verdict

    def _reference_world(
        self, instance: ScenarioInstance, reference_files: Callable[[], Mapping[str, bytes]]
    ) -> tuple[bytes, dict[str, bytes]]:
        memo = (instance.spec.id, instance.seed)
        found = self._worlds.get(memo)
        if found is not None:
            return found
        world = _with_probes(instance, reference_files())
        found = (_content_key(world, self._ids(instance)), world)
        self._worlds.put(memo, found)
        return found

    def guessable_checks(
        self, instance: ScenarioInstance, reference_files: Callable[[], Mapping[str, bytes]]
    ) -> list[str]:
        """Return the FAIL_TO_PASS checks whose reference observation a blind guess matches."""
        expected = self.expected(instance, reference_files)
        return [i for i in instance.spec.hidden.fail_to_pass if guessable(expected[i])]

    @staticmethod
    def _ids(instance: ScenarioInstance) -> list[str]:
        hidden = instance.spec.hidden
        return [*hidden.fail_to_pass, *hidden.pass_to_pass]


_BASELINE_MODULE = "_metasre_grading_baseline.py"


def grading_cost(
    instance: ScenarioInstance, files: Mapping[str, bytes], runner: ProbeRunner, runs: int = 3
) -> float:
    """Return the CPU seconds the hidden probes cost one grading of ``files``, run afresh.

    The probe modules' runs (their imports of the code under test and the probes) as the
    sandboxed children's supervisor measured them, less a run of an empty module in the same
    runner (the interpreter's own start, which a warm fork server does not pay per run); the
    least of ``runs`` each, as other work on a shared machine only ever adds. ``runner`` must
    report its children's CPU (``SubprocessRunner`` does; the fork server answers before its
    child exits). Nothing is kept. ``metasre validate`` holds each family to a budget with it.
    """
    ids = HiddenChecks._ids(instance)
    if not ids:
        return 0.0
    runtime = _with_probes(instance, files)
    by_file = _probes_by_file(ids)
    empty = {**runtime, _BASELINE_MODULE: b""}

    def measured(files: Mapping[str, bytes], path: str, names: Sequence[str]) -> float:
        # Only a run that completed and whose CPU was read counts: a run stopped by the
        # machine's load, or one the runner could not reap itself, reports 0.0, which made a
        # grading cost nothing (ad-ranking-crash, once, in a loaded suite). An interpreter
        # never starts for free.
        for _ in range(3):
            report = runner.observe(files, path, names)
            if report.status == "completed" and report.cpu_seconds > 0.0:
                return report.cpu_seconds
        raise HiddenCheckError(
            f"{instance.spec.id} seed {instance.seed}: three runs of {path} in a row gave no"
            f" CPU figure (last: {report.status}, {report.cpu_seconds} s); its grading cost"
            " cannot be measured"
        )

    probes = min(
        sum(measured(runtime, path, names) for path, names in by_file.items()) for _ in range(runs)
    )
    baseline = min(measured(empty, _BASELINE_MODULE, ()) for _ in range(runs))
    return max(0.0, probes - len(by_file) * baseline)
