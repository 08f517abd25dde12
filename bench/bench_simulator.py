"""Simulator micro-benchmarks: reset, cheap tool calls, test runs, memory per live episode.

Run: python bench/bench_simulator.py [scenario] — prints the first call of each cheap tool on a
fresh episode, memory per episode, and call sequences. Not a test: figures on a shared machine
are noisy, so the ratios between rows matter more than the absolute numbers.

The sequence table plays what a server sees: episodes of cheap reads as the clock moves on, each
call followed by `observation()`, as the coordinator does. It plays them twice, side by side:
as they run, with the memos (telemetry values, log minutes, alert streaks, the dashboard), and
with every memo dropped before each call and each observation (`Episode.drop_memos`), so each
computes its answer from scratch.
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
from metasre.simulator.report import normalize_location
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


def _reads(ep: Episode) -> list[tuple[str, dict[str, object]]]:
    """An investigation's cheap calls, in the order a sequence cycles through them."""
    truth = ep.instance.spec.ground_truth
    root = truth.service
    other = next(s for s in sorted(ep.world.services) if s != root)
    # The file the evidence points at when there is one, else the largest code file.
    code = [p for p in ep.workspace.walk() if p.endswith(".py") and not p.startswith("tests/")]
    location = normalize_location(truth.location)
    code_file = location if location in code else max(code, key=lambda p: len(ep.workspace.read(p)))
    return [
        ("get_alerts", {}),
        ("read_logs", {"service": root}),
        ("query_metrics", {"service": root, "metric": "error_rate"}),
        ("view_file", {"path": code_file}),
        ("read_logs", {"service": root, "level": "ERROR"}),
        ("check_dependencies", {}),
        ("read_logs", {"service": other}),
        ("describe_service", {"service": root}),
        ("get_alerts", {}),
        ("read_logs", {"service": root, "since_minutes": 60, "lines": 100}),
    ]


def _play(scenario: str, seed: int, runner: CachingRunner, memo: bool) -> dict[str, list[float]]:
    """One episode of reads until one step is left: ms per apply (by tool) and per observation."""
    times: dict[str, list[float]] = {}
    ep = Episode.make(scenario, seed, runner)
    reads = _reads(ep)
    ep.observation()  # the server's first observation, at the start of the session
    n = 0
    while ep.steps_left > 1:
        tool, targs = reads[n % len(reads)]
        n += 1
        if not memo:
            ep.drop_memos()
        # CPU time of this thread: on a shared machine, wall time would count other processes.
        t0 = time.thread_time_ns()
        ep.apply("bench", tool, targs)
        t1 = time.thread_time_ns()
        if not memo:
            ep.drop_memos()
        t2 = time.thread_time_ns()
        ep.observation()
        t3 = time.thread_time_ns()
        times.setdefault(f"apply {tool}", []).append((t1 - t0) / 1e6)
        times.setdefault("observation()", []).append((t3 - t2) / 1e6)
        # What the server pays per call, whichever tool does the work a later one reuses.
        times.setdefault("every call: apply + observation()", []).append((t1 - t0 + t3 - t2) / 1e6)
    return times


def _sequences(scenario: str, episodes: int, runner: CachingRunner) -> None:
    memo: dict[str, list[float]] = {}
    bare: dict[str, list[float]] = {}
    for seed in range(episodes):
        # Alternate the two ways so a busy moment of a shared machine hits both alike.
        for on, into in (
            ((True, memo), (False, bare)) if seed % 2 else ((False, bare), (True, memo))
        ):
            for name, samples in _play(scenario, seed, runner, on).items():
                into.setdefault(name, []).extend(samples)
    print()
    print(
        f"a sequence of reads, {episodes} episodes (seeds 0-{episodes - 1}); mean CPU ms per call"
    )
    print(f"{'measure':<34} {'memo':>9} {'no memo':>9} {'faster':>7} {'n':>6}")
    for name in sorted(memo, key=lambda k: (not k.startswith("apply"), k.startswith("every"))):
        on, off = statistics.fmean(memo[name]), statistics.fmean(bare[name])
        print(f"{name:<34} {on:>9.3f} {off:>9.3f} {off / on:>6.1f}x {len(memo[name]):>6}")


def _memory(label: str, make: Callable[[int], Episode], count: int = 200) -> None:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    live = [make(s) for s in range(count)]
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    size = sum(s.size_diff for s in after.compare_to(before, "filename"))
    print(f"{label:<34} {size / len(live) / 1024:>9.1f} KiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenario", nargs="?", default="ad-ranking-crash")
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument(
        "--episodes", type=int, default=20, help="episodes per way in the sequence table"
    )
    parser.add_argument(
        "--memory-episodes",
        type=int,
        default=200,
        help="live episodes per memory figure (half as many after 20 reads)",
    )
    parser.add_argument(
        "--sequence-only", action="store_true", help="only the memory rows and the sequence table"
    )
    args = parser.parse_args()
    entry = resolve(args.scenario)
    entry.instance(0)  # render and cache the tree once, as a server does at start
    runner = CachingRunner(ForkServerRunner())
    print(f"scenario {entry.id}")
    if not args.sequence_only:
        _micro(entry.id, runner, args.repeat)
    _memories(entry.id, runner, args.memory_episodes)
    _sequences(entry.id, args.episodes, runner)
    runner.close()
    return 0


def _micro(scenario: str, runner: CachingRunner, repeat: int) -> None:
    """Reset, each cheap tool as the first call of a fresh episode, and test runs."""
    print()
    print("each cheap tool as the first call of a fresh episode; ms")
    print(f"{'measure':<34} {'median':>9} {'p90':>9} {'n':>6}")
    _row("reset (Episode.make)", _timed(lambda: Episode.make(scenario, 0, runner), repeat))
    ep = Episode.make(scenario, 0, runner)
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
            e = Episode.make(scenario, 0, runner)
            e.apply("bench", tool, targs)

        reset = statistics.median(_timed(lambda: Episode.make(scenario, 0, runner), 50))
        samples = [max(0.0, s - reset) for s in _timed(call, repeat)]
        _row(f"apply {tool}", samples)
    suite = ep.instance.spec.expert.suite

    def cold() -> None:
        e = Episode.make(scenario, 0, runner)
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
    for _ in range(min(repeat, 60)):
        cold()
    _row(f"run_tests {suite}, cold", cold.samples)  # type: ignore[attr-defined]
    e = Episode.make(scenario, 0, runner)
    e.apply("bench", "run_tests", {"suite": suite})
    _row(
        f"run_tests {suite}, cached",
        _timed(lambda: e.apply("bench", "run_tests", {"suite": suite}), 20),
    )


def _memories(scenario: str, runner: CachingRunner, count: int) -> None:
    """What a live episode holds, fresh and after an investigation."""

    def one_call(seed: int) -> Episode:
        e = Episode.make(scenario, seed % 5, runner)
        e.apply("bench", "get_alerts", {})
        return e

    def after_reads(seed: int) -> Episode:
        # Idle after an investigation: whatever the memos kept stays with the session.
        e = Episode.make(scenario, seed % 5, runner)
        reads = _reads(e)
        for n in range(20):
            e.apply("bench", *reads[n % len(reads)])
            e.observation()
        return e

    print()
    _memory("memory per live episode", one_call, count)
    _memory("memory per episode after 20 reads", after_reads, max(1, count // 2))


if __name__ == "__main__":
    sys.exit(main())
