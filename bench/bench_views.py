"""What role views cost: a restricted seat's calls and events beside a full-view seat's.

Run: python -m bench.bench_views [--rounds N]. Side by side in one run, interleaved:

- a call: the same mix of looks (alerts, graph, events, logs, descriptions, metrics) applied
  through `EpisodeCaller` with the full view and with a view of half the services without the
  deploy system (the refusal check, the tools' cuts, the dashboard cut), per call;
- an event on a stream: a teammate's applied call as a full-view seat gets it (`SharedViews`:
  serialized once, shared by every stream) and as a restricted seat gets it (redacted, built
  per stream), per stream.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from metasre.conformance import EpisodeCaller
from metasre.service.core.events import Applied, LogEntry
from metasre.service.core.projection import teammate_call
from metasre.service.wire import convert
from metasre.service.wire.agent import SharedViews
from metasre.simulator import Episode, resolve
from metasre.simulator.views import FULL, View

SCENARIO = "meta-sre/payment-bad-deploy-v2"


def _looks(services: list[str]) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [
        ("get_alerts", {}),
        ("check_dependencies", {}),
        ("get_events", {}),
    ]
    for s in services:
        out += [
            ("read_logs", {"service": s, "lines": 80}),
            ("describe_service", {"service": s}),
            ("query_metrics", {"service": s, "metric": "error_rate"}),
        ]
    return out


def _per_call(view: View, looks: list[tuple[str, dict[str, Any]]]) -> float:
    """Microseconds per look, the caller's observation included, on a fresh episode."""
    episode = Episode.make(SCENARIO, 0)
    caller = EpisodeCaller(episode, "a", view)
    start = time.perf_counter()
    for tool, args in looks:
        caller(tool, args)
        caller.observation()
    return (time.perf_counter() - start) / len(looks) * 1e6


def _per_event(build: Callable[[], bytes], streams: int) -> float:
    """Microseconds per stream to get one event's bytes."""
    start = time.perf_counter()
    for _ in range(streams):
        build()
    return (time.perf_counter() - start) / streams * 1e6


def _redacted(event: Applied, sequence: int) -> bytes:
    return convert.teammate_call_response_bytes(teammate_call(event), sequence)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=30, help="interleaved rounds per figure")
    p.add_argument("--streams", type=int, default=8, help="streams each event goes to")
    args = p.parse_args()
    spec = resolve(SCENARIO).spec(0)
    names = [s.name for s in spec.services]
    half = names[: len(names) // 2]
    narrow = View(services=tuple(half), deploys=False)
    looks = _looks(half)  # looks both views may take: the same work asked of each
    _per_call(FULL, looks)  # rendering and caches warmed once for both
    calls: dict[str, list[float]] = {"full": [], "restricted": []}
    for k in range(args.rounds):
        order = [("full", FULL), ("restricted", narrow)]
        for name, view in order if k % 2 else reversed(order):
            calls[name].append(_per_call(view, looks))

    episode = Episode.make(SCENARIO, 0)
    step = episode.apply("b", "read_logs", {"service": half[0], "lines": 80})
    event = Applied(
        tick=step.tick, agent_id="b", call_id="c1", tool=step.tool, args=step.args, ok=step.ok,
        error_code="", text=step.output.text, data=step.output.data, minutes=step.minutes,
        clock=step.clock, round=0, phase=step.phase, observation=episode.observation(), reward=None,
    )  # fmt: skip
    events: dict[str, list[float]] = {"full": [], "restricted": []}
    for k in range(args.rounds):
        # A new log entry each round, as each applied call is: the shared view is built once
        # for it, then read by every stream; the redacted one is built per stream.
        entry = LogEntry(sequence=k + 1, episode=1, tick=step.tick, event=event)
        views = SharedViews()
        order = [
            ("full", lambda e=entry, v=views: v.applied(e, event)),
            ("restricted", lambda e=entry: _redacted(event, e.sequence)),
        ]
        for name, build in order if k % 2 else reversed(order):
            events[name].append(_per_event(build, args.streams))

    print(f"{SCENARIO}, seed 0: {len(looks)} looks a round, {args.rounds} rounds")
    print(f"{'measure':<52} {'full':>9} {'restricted':>10} {'ratio':>6}")
    for label, data in (
        ("a look, with its observation (us per call)", calls),
        (f"a teammate's call on a stream (us per stream, {args.streams})", events),
    ):
        f, r = statistics.median(data["full"]), statistics.median(data["restricted"])
        print(f"{label:<52} {f:>9.1f} {r:>10.1f} {r / f:>5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
