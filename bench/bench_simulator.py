"""Simulator micro-benchmarks: reset, cheap tool calls, test runs, memory per live episode.

Run: python bench/bench_simulator.py [scenario] — prints one table. Not a test: figures on a
shared machine are noisy, so the ratios between rows matter more than the absolute numbers.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable

from metasre.simulator import Episode, resolve
from metasre.simulator.sandbox import CachingRunner, ForkServerRunner


def _timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def _row(name: str, samples: list[float]) -> None:
    samples = sorted(samples)
    p90 = samples[int(0.9 * (len(samples) - 1))]
    print(f"{name:<34} {statistics.median(samples):>9.3f} {p90:>9.3f} {len(samples):>6}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenario", nargs="?", default="ad-ranking-crash")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    entry = resolve(args.scenario)
    entry.instance(0)  # render and cache the tree once, as a server does at start
    runner = CachingRunner(ForkServerRunner())
    print(f"scenario {entry.id}; times in ms")
    print(f"{'measure':<34} {'median':>9} {'p90':>9} {'n':>6}")
    _row("reset (Episode.make)", _timed(lambda: Episode.make(entry.id, 0, runner), args.repeat))
    ep = Episode.make(entry.id, 0, runner)
    code_file = next(
        p for p in ep.workspace.walk() if p.endswith(".py") and not p.startswith("tests/")
    )
    service = ep.instance.spec.ground_truth.service
    cheap = {
        "get_alerts": {},
        "read_logs": {"service": service},
        "view_file": {"path": code_file},
        "query_metrics": {"service": service, "metric": "error_rate"},
        "check_dependencies": {},
    }
    for tool, targs in cheap.items():

        def call(tool: str = tool, targs: dict[str, object] = targs) -> None:
            e = Episode.make(entry.id, 0, runner)
            e.apply("bench", tool, targs)

        reset = statistics.median(_timed(lambda: Episode.make(entry.id, 0, runner), 50))
        samples = [max(0.0, s - reset) for s in _timed(call, args.repeat)]
        _row(f"apply {tool}", samples)
    suite = ep.instance.spec.expert.suite

    def cold() -> None:
        e = Episode.make(entry.id, 0, runner)
        # A unique comment makes the code state new, so the cache cannot answer.
        cold.n += 1  # type: ignore[attr-defined]
        e.apply(
            "bench",
            "edit_lines",
            {
                "path": code_file,
                "action": "insert",
                "start_line": 1,
                "content": f"# bench {cold.n}",
            },
        )  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        e.apply("bench", "run_tests", {"suite": suite})
        cold.samples.append((time.perf_counter() - t0) * 1e3)  # type: ignore[attr-defined]

    cold.n = 0  # type: ignore[attr-defined]
    cold.samples = []  # type: ignore[attr-defined]
    for _ in range(min(args.repeat, 60)):
        cold()
    _row(f"run_tests {suite}, cold", cold.samples)  # type: ignore[attr-defined]
    e = Episode.make(entry.id, 0, runner)
    e.apply("bench", "run_tests", {"suite": suite})
    _row(
        f"run_tests {suite}, cached",
        _timed(lambda: e.apply("bench", "run_tests", {"suite": suite}), 20),
    )
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    live = [Episode.make(entry.id, s % 5, runner) for s in range(200)]
    for e in live:
        e.apply("bench", "get_alerts", {})
    after = tracemalloc.take_snapshot()
    size = sum(s.size_diff for s in after.compare_to(before, "filename"))
    print(f"{'memory per live episode':<34} {size / len(live) / 1024:>9.1f} KiB")
    runner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
