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


def _serve(args: argparse.Namespace) -> int:
    import asyncio
    import os
    from pathlib import Path

    from metasre.service import Limits, ServerConfig, serve
    from metasre.service.server import MetasreServer, prepare_sandbox

    try:
        config = ServerConfig(
            host=args.host,
            port=args.port,
            limits=Limits(
                max_sessions=args.max_sessions,
                max_agents_per_session=args.max_agents_per_session,
                max_message_bytes=args.max_message_bytes,
                idle_session_seconds=args.idle_session_seconds,
                idle_seat_seconds=args.idle_seat_seconds,
                turn_timeout_seconds=args.turn_timeout_seconds,
            ),
            tls_cert=Path(args.tls_cert) if args.tls_cert else None,
            tls_key=Path(args.tls_key) if args.tls_key else None,
            admin_token=os.environ.get(args.admin_token_env) or None,
            grace_seconds=args.grace_seconds,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # The sandbox's fork server must start before any gRPC thread exists.
    prepare_sandbox()

    def ready(server: MetasreServer) -> None:
        # One JSON line on stdout says where to connect (logs go to stderr).
        print(json.dumps({"event": "serving", "address": server.address}), flush=True)

    asyncio.run(serve(config, ready))
    return 0


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
    p = sub.add_parser("serve", help="run the gRPC server (SIGTERM drains and stops it)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=50051, help="port (0 picks a free one)")
    p.add_argument("--max-sessions", type=int, default=256, help="sessions open at once")
    p.add_argument("--max-agents-per-session", type=int, default=16, help="seats per session")
    p.add_argument("--max-message-bytes", type=int, default=4 * 1024 * 1024, help="largest message")
    p.add_argument(
        "--idle-session-seconds", type=float, default=3600.0, help="close idle sessions after"
    )
    p.add_argument(
        "--idle-seat-seconds", type=float, default=900.0, help="end silent streams after"
    )
    p.add_argument("--turn-timeout-seconds", type=float, default=30.0, help="default turn timeout")
    p.add_argument("--tls-cert", help="PEM certificate chain (TLS needs --tls-key too)")
    p.add_argument("--tls-key", help="PEM private key")
    p.add_argument(
        "--admin-token-env",
        default="METASRE_ADMIN_TOKEN",
        help="environment variable holding the admin token for control calls "
        "(default METASRE_ADMIN_TOKEN; unset means no token needed)",
    )
    p.add_argument("--grace-seconds", type=float, default=5.0, help="drain time on shutdown")
    p.set_defaults(func=_serve)
    return parser


def _configure_logging(verbose: bool, as_json: bool = False) -> None:
    # Logs go to stderr so that stdout stays clean for tables and --json.
    processors: list[structlog.typing.Processor] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso"),
        structlog.processors.dict_tracebacks,
        structlog.processors.JSONRenderer(),
    ]
    structlog.configure(
        processors=processors if as_json else structlog.get_config()["processors"],
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.DEBUG if verbose else logging.INFO if as_json else logging.WARNING
        ),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line."""
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose, as_json=args.command == "serve")
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
