"""The world's production traffic: requests the services really serve, replayed on the current code.

A code fault lives in the code the platform runs, so the world reacts to a code change the way
production does: the requests the services serve either come back right again or keep
failing. A family whose incidents are code bugs ships that traffic as a module beside its
hidden checks, ``hidden/traffic.py`` (the loader reads that folder; the module is no hidden
check: it is sent only to traffic runs, and its requests show in the services' logs). It
declares each request it serves:

    REQUESTS = {"rank_two_ads": ["ad_ranking", "POST /v1/rank candidates=ad-a,ad-b"], ...}

and defines a function of that name which makes the request against the services' code and
returns the response as plain data. A traffic run calls them in a sandbox of the traffic
runner (never the grader's) on the episode's current code; each response is compared, here,
with the response of the reference world (the scenario's solution applied) to the same
request. A request is served when the two are equal.

What this tells an agent is what production would: whether these requests, which it can read
in the logs, are answered right. The hidden checks make other calls on other inputs and run
only once the episode is over (``metasre.simulator.hidden``), so code that answers only this
traffic right still fails the grade.
"""

from __future__ import annotations

import ast
import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .hidden import canonical
from .lru import Lru
from .probe_calls import PROBE_PATH, parse_module, shipped_source
from .sandbox import ProbeRunner, default_traffic_runner
from .scenarios.loader import ScenarioInstance

__all__ = [
    "TRAFFIC_FILE",
    "Request",
    "Served",
    "TrafficCheck",
    "requests_of",
]

TRAFFIC_FILE = "hidden/traffic.py"
"""Where a family's traffic module sits among the files the loader reads beside the code."""

_KEPT = 2048


@dataclass(frozen=True, slots=True)
class Request:
    """One request of a service's production traffic."""

    name: str
    """The traffic module's function that makes it."""
    service: str
    """The service that serves it (whose log shows it)."""
    line: str
    """The request as the service logs it."""


@dataclass(frozen=True, slots=True)
class Served:
    """How the current code served one request."""

    request: Request
    ok: bool
    """The response is the one the reference world gives."""
    status: str
    """What the service's log says came back: ``200 OK``, ``500 KeyError``, ..."""

    @property
    def log_line(self) -> str:
        """The request and its outcome, as the service logs it."""
        return f"{self.request.line} -> {self.status}"


def requests_of(instance: ScenarioInstance) -> tuple[Request, ...]:
    """The requests of ``instance``'s traffic module, in declared order (none without one).

    Read from the module's text (``REQUESTS`` is a literal): the trusted side never imports
    code that imports the services.
    """
    source = instance.hidden_files.get(TRAFFIC_FILE)
    if source is None:
        return ()
    for node in parse_module(source).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "REQUESTS"
        ):
            declared = ast.literal_eval(node.value)
            return tuple(
                Request(name, str(svc), str(line)) for name, (svc, line) in declared.items()
            )
    raise ValueError(f"{instance.spec.id}: {TRAFFIC_FILE} declares no REQUESTS literal")


def _status(observation: str | None, ok: bool) -> str:
    """What the log shows for a response: its status, or the error that escaped."""
    if observation is None:
        return "504 Gateway Timeout (no answer)"
    value: object = json.loads(observation)
    if isinstance(value, dict) and set(value) <= {"raised", "unserialisable", "too_long"}:
        return f"500 Internal Server Error ({value.get('raised') or 'bad response'})"
    code = value.get("status") if isinstance(value, dict) else None
    status = str(code) if isinstance(code, int) else "200"
    if ok:
        return f"{status} OK" if status == "200" else status
    # the caller noticed: the answer is not what the contract promises
    return f"{status}, but the response is not what the API promises (the caller flagged it)"


def _key(files: Mapping[str, bytes]) -> bytes:
    digest = hashlib.sha256(b"metasre-traffic-v1\0")
    for path in sorted(files):
        encoded, content = path.encode(), files[path]
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
        digest.update(len(content).to_bytes(8, "big") + content)
    return digest.digest()


class TrafficCheck:
    """Replays a scenario's production traffic on some code and judges each response.

    Thread-safe; one instance serves every episode of a process. Responses are memoised by
    the content of the files (a probe run is a function of them: the sandbox fixes the clock
    and the random seed), so a replay, a recovery or another episode reaching the same code
    never runs it twice.

    Args:
        runner: The traffic runner (``purpose="traffic"``); the shared one when None.
    """

    def __init__(self, runner: ProbeRunner | None = None) -> None:
        self._runner = runner
        self._lock = threading.Lock()
        self._observed: Lru[bytes, dict[str, str | None]] = Lru(_KEPT)
        self._references: Lru[tuple[str, int], dict[str, str | None]] = Lru(_KEPT)

    def clear(self) -> None:
        """Forget every response kept (see `Catalog.reload`)."""
        self._observed.clear()
        self._references.clear()

    @property
    def runner(self) -> ProbeRunner:
        """The runner traffic runs in."""
        if self._runner is None:
            self._runner = default_traffic_runner()
        return self._runner

    def serve(
        self,
        instance: ScenarioInstance,
        files: Mapping[str, bytes],
        reference_files: Callable[[], Mapping[str, bytes]],
    ) -> tuple[Served, ...]:
        """Serve every request of ``instance``'s traffic on ``files``; empty without traffic."""
        requests = requests_of(instance)
        if not requests:
            return ()
        memo = (instance.spec.id, instance.seed)
        expected = self._references.peek(memo)
        if expected is None:
            # not memoised by content: code that equals the reference's would otherwise be
            # served from the memo, and answer faster than other code (a timing of the answer)
            expected = self._observe(instance, reference_files(), requests, keep=False)
            self._references.put(memo, expected)
        observed = self._observe(instance, files, requests)
        out = []
        for request in requests:
            seen = observed.get(request.name)
            ok = seen is not None and seen == expected.get(request.name)
            out.append(Served(request, ok, _status(seen, ok)))
        return tuple(out)

    def _observe(
        self,
        instance: ScenarioInstance,
        files: Mapping[str, bytes],
        requests: tuple[Request, ...],
        *,
        keep: bool = True,
    ) -> dict[str, str | None]:
        run = dict(files)
        run[PROBE_PATH] = shipped_source(instance.hidden_files[TRAFFIC_FILE])
        key = _key(run)
        found = self._observed.get(key)
        if found is not None:
            return found
        report = self.runner.observe(run, PROBE_PATH, [r.name for r in requests])
        trusted = report.status == "completed"
        observed = {
            r.name: canonical(report.observation(r.name)) if trusted else None for r in requests
        }
        if keep and report.status in ("completed", "sandbox_violation"):
            # a timeout or a crash can depend on the machine's load: those are not kept
            self._observed.put(key, observed)
        return observed
