"""Instructions a server executes for cheap calls, counted by callgrind: trees side by side.

Usage: python -m bench.bench_instructions [--tree REV ...] [--runs N] [--sessions N]

CPU time on a shared machine moves by a third between runs of the same tree; instruction counts
repeat within about 1%. Each side's server (`python -m bench._serve metasre --store ...
--no-manage-gc`) runs under `valgrind --tool=callgrind --instr-atstart=no`, every thread of it
counted; this tree's client, in this process, warms it up (2 sessions), turns counting on, then
creates `--sessions` sessions of 3 seats, joins them, makes 13 cheap calls a seat (read_logs,
get_alerts, view_file, event batches on: `bench.sections`' transport round) and closes them,
and turns counting off. `--no-manage-gc`: the GC freezer ticks on wall time, which callgrind
slows fifty times, so with it a count would depend on how slow the run was.

A tree named by `--tree` runs with its packages first on the path (as `bench.bench_hot` runs
`before`); `.` is this tree. `--echo` counts the fan-out echo too (`bench._serve echo
--fanout`: the same messages on the same stack, no simulation, no store), the floor of what
the stack costs; `--simulation` the simulation's part in process (apply and observation()
of the same calls). The kernel's part of a call (gRPC's `sendmsg`, wake-ups) is not counted.
`--dir` keeps each run's callgrind file (for `callgrind_annotate`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_grading import _extract, _namespace
from bench.sections import CHEAP_SCENARIO, _transport_round, cheap_calls

ROOT = Path(__file__).resolve().parent.parent
CALLS_PER_SEAT = 13
SEATS = 3


def count(path: list[Path], sessions: int, out: Path, *, echo: bool = False) -> int:
    """Instructions one server executed for `sessions` sessions' cheap calls (see the docstring).

    `echo`: the fan-out echo instead (`bench._serve echo --fanout`: the messages META-SRE
    sends for each call, batched as it batches them, with no simulation and no store).
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in path))
    with tempfile.TemporaryDirectory(prefix="metasre-count-") as tmp:
        if echo:
            serve = [sys.executable, "-m", "bench._serve", "echo", "--fanout"]
        else:
            serve = [sys.executable, "-m", "bench._serve", "metasre", "--no-manage-gc"]
            serve += ["--store", str(Path(tmp) / "bench.db")]
        grind = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        proc = subprocess.Popen(
            [*grind, f"--callgrind-out-file={out}", *serve],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            line = proc.stdout.readline()
            while line and not line.startswith("{"):
                line = proc.stdout.readline()
            if not line:
                raise SystemExit("the server did not start under callgrind")
            info = json.loads(line)
            calls = cheap_calls(CHEAP_SCENARIO)
            address = info["address"]
            asyncio.run(_transport_round(address, echo, 2, SEATS, 3, calls))
            _control("-i", "on", info["pid"])
            asyncio.run(_transport_round(address, echo, sessions, SEATS, CALLS_PER_SEAT, calls))
            _control("-i", "off", info["pid"])
        finally:
            proc.stdin.close()
            proc.wait(600)
    found = re.search(rb"^totals: (\d+)", out.read_bytes(), re.M)
    if found is None:
        raise SystemExit(f"{out} holds no summary line: did callgrind finish?")
    return int(found.group(1))


# The simulation's part of the same calls, in process: each session's episode made, then each
# seat's 13 calls applied in turn, each followed by `observation()` (as the coordinator does).
# Counted twice, without the calls and with them; the difference is theirs.
_SIMULATION = """
import sys
from bench.sections import CHEAP_SCENARIO, cheap_calls
from metasre.simulator import Episode
calls = cheap_calls(CHEAP_SCENARIO)
sessions, seats, per_seat, play = (int(a) for a in sys.argv[1:5])
episodes = [Episode.make(CHEAP_SCENARIO, 0) for _ in range(sessions)]
for e in episodes:
    e.observation()
for i in range(per_seat * seats if play else 0):
    for k, e in enumerate(episodes):
        tool, args = calls[(i // seats + i % seats + k) % len(calls)]
        e.apply(f"a{i % seats}", tool, args)
        e.observation()
"""


def count_simulation(sessions: int, out: Path) -> int:
    """Instructions the simulation alone spends on the cheap calls (see `_SIMULATION`)."""
    totals = []
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="0")
    for play in (0, 1):
        sizes = (str(sessions), str(SEATS), str(CALLS_PER_SEAT), str(play))
        grind = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}.{play}")
        done = subprocess.run(
            [*grind, sys.executable, "-c", _SIMULATION, *sizes],
            cwd=ROOT,
            env=env,
            capture_output=True,
            check=False,
        )
        if done.returncode:
            raise SystemExit(f"the simulation's count failed:\n{done.stderr.decode()[-2000:]}")
        found = re.search(rb"^totals: (\d+)", Path(f"{out}.{play}").read_bytes(), re.M)
        assert found is not None
        totals.append(int(found.group(1)))
    return totals[1] - totals[0]


def _control(*args: object) -> None:
    subprocess.run(["callgrind_control", *map(str, args)], check=True, capture_output=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tree", nargs="+", default=["."], help="revisions; '.' is this tree")
    p.add_argument("--runs", type=int, default=2, help="runs of each tree, alternating")
    p.add_argument("--sessions", type=int, default=8)
    p.add_argument("--dir", type=Path, help="keep the callgrind files here")
    p.add_argument(
        "--echo", action="store_true", help="also this tree's fan-out echo: the stack's floor"
    )
    p.add_argument(
        "--simulation", action="store_true", help="also the simulation's part, in process"
    )
    args = p.parse_args()
    missing = [tool for tool in ("valgrind", "callgrind_control") if shutil.which(tool) is None]
    if missing:
        raise SystemExit(
            f"{' and '.join(missing)} not found: install valgrind (apt-get install valgrind)"
        )
    calls = args.sessions * SEATS * CALLS_PER_SEAT
    counts: dict[str, list[int]] = {rev: [] for rev in args.tree}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        keep = args.dir or work
        keep.mkdir(parents=True, exist_ok=True)
        paths = {
            rev: [ROOT]
            if rev == "."
            else [ROOT, _namespace(_extract(rev, work / rev), work / f"ns-{rev}")]
            for rev in args.tree
        }
        sides = [(rev, paths[rev], False) for rev in args.tree]
        if args.echo:
            counts["echo"] = []
            sides.append(("echo", [ROOT], True))
        for k in range(args.runs):
            for name, path, echo in sides:
                out = keep / f"callgrind.{name.replace('/', '_')}.{k}.{time.time_ns()}"
                counts[name].append(count(path, args.sessions, out, echo=echo))
                print(f"{name} run {k + 1}: {counts[name][-1] / 1e6:,.0f} M", file=sys.stderr)
        if args.simulation:
            out = keep / f"callgrind.simulation.{time.time_ns()}"
            counts["simulation"] = [count_simulation(args.sessions, out)]
    print(f"{calls} cheap calls, {args.sessions} sessions x {SEATS} seats")
    first = min(counts[args.tree[0]])
    for rev, values in counts.items():
        low = min(values)
        runs = " / ".join(f"{v / 1e6:,.0f}" for v in values)
        print(
            f"{rev:<12} {runs} M   per call {low / calls / 1e3:,.0f} k   "
            f"against {args.tree[0]} {low / first:.3f}x"
        )


if __name__ == "__main__":
    main()
