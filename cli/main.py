"""Entry point of the metasre command: `metasre scenarios`, `metasre validate`, ..."""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
from collections.abc import Sequence

import structlog


def _scenarios(args: argparse.Namespace) -> int:
    from metasre.simulator import resolve, scenario_ids

    rows = []
    for sid in scenario_ids():
        spec = resolve(sid).instance(0).spec
        rows.append(
            {
                "id": sid,
                "title": spec.title,
                "severity": spec.severity,
                "difficulty": spec.difficulty,
                "sla_minutes": spec.sla_minutes,
                "step_budget": spec.step_budget,
                "seed_varies": list(spec.seed_varies),
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['id']:<42} {r['severity']} {r['difficulty']:<6} {r['title']}")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from metasre.cli.validate import validate_scenario
    from metasre.simulator import resolve, scenario_ids

    try:
        ids = [resolve(i).id for i in args.ids] if args.ids else scenario_ids()
    except LookupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    seeds = list(range(args.seeds))
    failed = 0
    reports = []
    if not args.json:
        print(f"{'scenario':<42} {'ref':>5} {'expert':>12} {'random':>7} {'probes max':>10}")
    for sid in ids:
        v = validate_scenario(sid, seeds, args.random_seeds)
        reports.append(v.to_dict())
        failed += not v.ok
        if not args.json:
            expert = f"{min(v.expert):.2f}/{statistics.fmean(v.expert):.2f}" if v.expert else "-"
            probes = max((max(x) for x in v.probes.values()), default=0.0)
            print(
                f"{sid:<42} {min(v.reference, default=0):>5.2f} {expert:>12} "
                f"{statistics.fmean(v.random) if v.random else 0:>7.3f} {probes:>10.3f}"
                f"  {'ok' if v.ok else 'FAIL'}"
            )
            for f in v.failures:
                print(f"    - {f}")
    if args.json:
        print(json.dumps(reports, indent=2))
    elif not failed:
        print(
            f"all {len(ids)} scenarios valid over seeds 0-{args.seeds - 1} "
            f"(expert min/mean; random mean over {args.random_seeds} seeds)"
        )
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    parser = argparse.ArgumentParser(prog="metasre", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs on stderr")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("scenarios", help="list the registered scenarios")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_scenarios)
    p = sub.add_parser(
        "validate",
        help="prove scenarios: start fails, reference and expert "
        "pass, random agent and reward-hacking probes fail",
    )
    p.add_argument("ids", nargs="*", help="scenario ids or names (default: all)")
    p.add_argument("--seeds", type=int, default=5, help="seeds per scenario (default 5)")
    p.add_argument(
        "--random-seeds",
        type=int,
        default=20,
        help="episodes of the random agent per scenario (default 20)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_validate)
    return parser


def _configure_logging(verbose: bool) -> None:
    # Logs go to stderr so that stdout stays clean for tables and --json.
    structlog.configure(
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.DEBUG if verbose else logging.WARNING
        ),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line."""
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
