"""`metasre experiment FILE`: compare teams over families and seeds.

A grid of team compositions, turn policies and reward settings, played over families and seeds
and compared with confidence intervals over instances.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..agents.experiment import (
    CONFIDENCE,
    FAMILY_METRICS,
    ConfigurationResult,
    ExperimentFile,
    configurations,
    summarize_configuration,
)
from ..agents.rollout import EpisodeSpec, run_rollout
from ..agents.sync import SyncClient
from ..agents.teamwork import LOOK_KIND, EpisodeTeamwork, teamwork
from .arguments import add_command, add_store_flags, positive_int
from .connection import Connection, add_connection_flags
from .errors import ExitCode, OutputError, UsageError
from .interrupt import ledgered_run
from .progress import progress
from .rollout import list_scenario_ids, resolve_scenarios, seeds_in_split
from .serving import local_store


def read_experiment(path: Path) -> ExperimentFile:
    """Parse and check an experiment file; a UsageError says what is wrong and where."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the experiment file {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not valid TOML: {exc}") from None
    try:
        return ExperimentFile.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(file)'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise UsageError(f"{path}: {problems}") from None


def add_parser(sub: Any) -> None:
    """Register `experiment` on the command line's subparsers."""
    p = add_command(
        sub,
        "experiment",
        "run a grid of teams, turn policies and reward settings; compare them over seeds",
        "Run the grid an experiment file (TOML) declares: every team composition under every "
        "turn policy, attribution mode and reward mode, over its families and seeds, on a "
        "server started in process (or --target). Prints one row per configuration with 95% "
        "bootstrap confidence intervals over instances (family, seed): grade, resolved and "
        "SLA-met rates, minutes to mitigation, steps, messages sent and received, redundant "
        "looks (the same look by two seats), idle turns, and each seat's credit; --out writes "
        "all of it, per episode too, as JSON. Ctrl-C prints what finished (exit 130).",
    )
    p.add_argument("file", type=Path, help="the experiment file (see examples/)")
    p.add_argument("--out", type=Path, help="write the results as JSON to this file")
    p.add_argument("--parallel", type=positive_int, help="episodes at once (default: the file's)")
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    p.add_argument(
        "--split",
        choices=("train", "test"),
        default=None,
        help="play only each family's seeds in this split (default: the file's `split`, else all)",
    )
    add_connection_flags(p, local="start one in process, recording into --store")
    add_store_flags(p, "a server started in process records every episode")
    p.set_defaults(func=experiment_command)


def experiment_command(args: argparse.Namespace) -> int:
    """Run `metasre experiment`; 1 when an episode could not be played or graded."""
    spec = read_experiment(args.file)
    if args.out is not None and not args.out.parent.is_dir():
        raise OutputError(f"cannot write {args.out}: its folder {args.out.parent} does not exist")
    connection = Connection.from_args(args)
    store = local_store(args, connection)
    cells = configurations(spec)
    parallel = args.parallel or spec.parallel
    results: list[ConfigurationResult] = []
    with ledgered_run(
        connection,
        "no new episode starts; closing the sessions under way",
        store=store,
        max_sessions=max(256, 4 * parallel),
    ) as run:
        interrupt, client, address = run.interrupt, run.client, run.address
        try:
            families = resolve_scenarios(spec.families, list_scenario_ids(client))
        except LookupError as exc:
            raise UsageError(f"{args.file}: {exc.args[0]}") from None
        sla = {str(s["id"]): float(s.get("sla_minutes", 0.0)) for s in client.list_scenarios()}
        looks = [str(t["name"]) for t in client.list_tools() if t.get("kind") == LOOK_KIND]

        def collect(c: SyncClient, session_id: str) -> EpisodeTeamwork:
            events = c.get_trajectory(session_id)
            # The owner reads its session's instance (seats are not told it).
            family = str(c.get_session(session_id).get("scenario_id", ""))
            return teamwork(events, sla_minutes=sla.get(family, 0.0), look_tools=looks)

        split = args.split or spec.split
        try:
            instances = [(f, s) for f in families for s in seeds_in_split(f, spec.seeds, split)]
        except ValueError as exc:
            raise UsageError(f"{args.file}: {exc}") from None
        plan = [
            EpisodeSpec(i, family, seed)
            for i, ((family, seed), _) in enumerate(
                itertools.product(instances, range(spec.repetitions))
            )
        ]
        print(
            f"experiment {spec.name!r}: {len(cells)} configurations x {len(plan)} episodes "
            f"({len(families)} families, {len(spec.seeds)} seeds, {spec.repetitions} "
            f"repetitions), parallel {parallel}, on "
            f"{connection.target or f'a server in process at {address}'}",
            file=sys.stderr,
            flush=True,
        )
        with progress(len(cells) * len(plan), "experiment", enabled=not args.no_progress) as tick:
            for cell in cells:
                if interrupt.requested:
                    break
                report = run_rollout(
                    client,
                    cell.player(client),
                    plan,
                    parallel=parallel,
                    agent=cell.label,
                    on_result=tick,
                    stop=lambda: interrupt.requested,
                    collect=collect,
                )
                if report.results:
                    results.append(summarize_configuration(cell, report.results))
        run.ledger.wait_closed()
    print_comparison(results)
    if args.out is not None:
        out = {
            "experiment": spec.name,
            "file": str(args.file),
            "families": families,
            "seeds": spec.seeds,
            "repetitions": spec.repetitions,
            "confidence": CONFIDENCE,
            "interrupted": interrupt.requested,
            "configurations": [r.to_dict() for r in results],
        }
        try:
            args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise OutputError(f"cannot write {args.out}: {exc.strerror}") from None
        print(f"results in {args.out}", file=sys.stderr)
    if interrupt.requested:
        print(
            f"interrupted: {len(results)} of {len(cells)} configurations have figures",
            file=sys.stderr,
        )
        return ExitCode.INTERRUPTED
    return ExitCode.FAILED if any(r.failed for r in results) else ExitCode.OK


COLUMNS = (
    ("grade", "grade", 2),
    ("resolved", "resolved", 2),
    ("sla_met", "SLA met", 2),
    ("mitigation_minutes", "mitigated (min)", 1),
    ("steps", "steps", 1),
    ("messages_sent", "msgs sent", 1),
    ("redundant_looks", "redundant", 1),
    ("idle_turns", "idle turns", 1),
)


def print_comparison(results: Sequence[ConfigurationResult]) -> None:
    """One block per configuration: each figure's mean and 95% interval over instances."""
    for r in results:
        print(f"{r.configuration.label}  ({r.episodes} episodes, {r.failed} failed)")
        for key, title, digits in COLUMNS:
            e = r.figures.get(key)
            print(f"  {title:<18} {e.text(digits) if e else '-'}")
        graded = r.figures.get("grade")
        instances = graded.seeds if graded else 0
        credit = ", ".join(
            f"{seat} {e.text()}"
            + (f" (in {e.seeds} of {instances})" if e.seeds < instances else "")
            for seat, e in r.credit.items()
            if e
        )
        print(f"  {'credit per seat':<18} {credit or '-'}")
    if any(len(r.by_family) > 1 for r in results):
        print("per family: SLA met | grade | resolved | mitigated (min)")
        for r in results:
            print(f"{r.configuration.label}")
            for family, figures in r.by_family.items():
                shown = [
                    e.text(1 if name == "mitigation_minutes" else 2) if e else "-"
                    for name in FAMILY_METRICS
                    for e in [figures.get(name)]
                ]
                print(f"  {family.rpartition('/')[2]:<28} {' | '.join(shown)}")
    print(f"means over instances (family, seed) with {CONFIDENCE:.0%} bootstrap intervals")
