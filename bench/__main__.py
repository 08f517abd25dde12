"""META-SRE benchmarks: python -m bench [SECTION ...] [--json] [--quick] [size flags].

Sections: transport, reset, tests, rollouts, scale (default: all, in that order, though the
test runs go first so the sandbox's fork server starts before any gRPC thread). Every figure
is printed beside a baseline measured in the same run (an echo service, a fresh interpreter,
the simulator with no wire, an unloaded server) and their ratio, because absolute times on a
shared machine are noise. Servers run in their own processes; RSS and CPU time are read from
/proc. Results and the machine go to one table, or to JSON with --json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from dataclasses import replace
from typing import Any

import structlog

from bench.common import Row, machine
from bench.scale import scale
from bench.sections import CHEAP_SCENARIO, Sizes, reset, rollouts, test_runs, transport
from metasre.cli.arguments import seed_list

SECTIONS = ("tests", "transport", "reset", "rollouts", "scale")


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("sections", nargs="*", choices=(*SECTIONS, []), help="default: all")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--quick", action="store_true", help="small sizes: a quick look")
    p.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest sizes that still run every code path (the test suite's check that"
        " every section runs; its figures mean nothing)",
    )
    p.add_argument("--rounds", type=int, help="transport rounds per server (default 3)")
    p.add_argument("--sessions", type=int, help="transport sessions (default 16)")
    p.add_argument("--resets", type=int, help="sessions created and joined (default 1000)")
    p.add_argument("--test-runs", type=int, help="cold run_tests per suite kind (default 15)")
    p.add_argument(
        "--seeds", type=seed_list, help="rollout seeds, a seed list like metasre's (default 0-3)"
    )
    p.add_argument("--parallel", type=int, nargs="+", help="rollout parallelism (1 8 32)")
    p.add_argument(
        "--scenarios", nargs="+", help="scenario ids or names the rollouts play (default: all)"
    )
    p.add_argument("--scale-sessions", type=int, help="sessions held in scale (default 1000)")
    p.add_argument("--scale-seconds", type=float, help="each active phase of scale (default 8)")
    p.add_argument(
        "--scale-processes", type=int, help="client processes holding scale's sessions (default 2)"
    )
    return p.parse_args(argv)


def sizes_from(args: argparse.Namespace) -> Sizes:
    sizes = Sizes()
    if args.quick:
        sizes = replace(
            sizes,
            transport_rounds=1,
            resets=100,
            test_runs=4,
            rollout_seeds=(0,),
            rollout_parallel=(1, 8),
            scale_sessions=100,
            scale_seconds=3.0,
        )
    if args.smoke:
        sizes = replace(
            sizes,
            transport_rounds=1,
            transport_sessions=2,
            resets=10,
            test_runs=1,
            rollout_seeds=(0,),
            rollout_parallel=(2,),
            rollout_scenarios=(CHEAP_SCENARIO, "meta-sre/ad-ranking-crash-v2"),
            scale_sessions=10,
            scale_seconds=1.0,
            scale_think_seconds=0.05,
            scale_processes=1,
        )
    pairs = {
        "transport_rounds": args.rounds,
        "transport_sessions": args.sessions,
        "resets": args.resets,
        "test_runs": args.test_runs,
        "rollout_seeds": tuple(args.seeds) if args.seeds else None,
        "rollout_parallel": tuple(args.parallel) if args.parallel else None,
        "rollout_scenarios": tuple(args.scenarios) if args.scenarios else None,
        "scale_sessions": args.scale_sessions,
        "scale_seconds": args.scale_seconds,
        "scale_processes": args.scale_processes,
    }
    return replace(sizes, **{k: v for k, v in pairs.items() if v is not None})


def fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def print_table(rows: list[Row], info: dict[str, Any]) -> None:
    print(
        f"commit {info['commit']} | {info['nproc']} CPUs, {info['cpu']} | Python {info['python']}"
        f" | load {info['load']} -> {info['load_after']} | {info['seconds']:.0f} s"
    )
    header = ("section", "measure", "META-SRE", "baseline", "ratio", "target", "holds")
    table = [
        (
            r.section,
            r.measure,
            fmt(r.value),
            fmt(r.reference),
            fmt(r.ratio),
            r.target,
            "" if r.holds is None else ("yes" if r.holds else "NO"),
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(header)]
    line = " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    print(line)
    print("-" * len(line))
    for t in table:
        cells = [
            c.ljust(w) if i in (0, 1, 5) else c.rjust(w)
            for i, (c, w) in enumerate(zip(t, widths, strict=True))
        ]
        print(" | ".join(cells))


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    wanted = [s for s in SECTIONS if not args.sections or s in args.sections]
    sizes = sizes_from(args)
    info = machine()
    started = time.perf_counter()
    rows: list[Row] = []
    raw: dict[str, Any] = {}
    fork = None
    if "tests" in wanted:
        # The fork server must exist before any gRPC thread does in this process.
        from metasre.simulator.sandbox import ForkServerRunner

        fork = ForkServerRunner()
        fork.start()
    try:
        for section in wanted:
            print(f"... {section}", file=sys.stderr, flush=True)
            if section == "tests":
                r, out = test_runs(sizes, fork)
            elif section == "transport":
                r, out = asyncio.run(transport(sizes))
            elif section == "reset":
                r, out = asyncio.run(reset(sizes))
            elif section == "rollouts":
                r, out = rollouts(sizes)
            else:
                r, out = asyncio.run(scale(sizes))
            rows += r
            raw[section] = out
    finally:
        if fork is not None:
            fork.close()
    info["seconds"] = time.perf_counter() - started
    info["load_after"] = [round(x, 2) for x in __import__("os").getloadavg()]
    if args.json:
        payload = {"machine": info, "rows": [r.to_dict() for r in rows], "sections": raw}
        print(json.dumps(payload, indent=2))
    else:
        print_table(rows, info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
