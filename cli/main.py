"""Entry point of the metasre command: `metasre scenarios`, `metasre validate`, ..."""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

import structlog

from metasre.cli.rollout import add_parsers as add_rollout_parsers

EXIT_STORE_IN_USE = 4
"""Exit code of `serve` and `demo` when another server holds their trajectory store."""
HANDOVER_WAIT_SECONDS = 60.0
"""How long `serve --handover` waits for the server it takes over from to let go of the store."""


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


def _health(args: argparse.Namespace) -> int:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(args.target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(
                health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout
            )
        except grpc.RpcError as exc:
            print(f"unhealthy: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(status)
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


def _demo(args: argparse.Namespace) -> int:
    from metasre.cli.demo import main as demo

    return demo(args.scenario, args.seed, args.policy, args.store)


def _validate(args: argparse.Namespace) -> int:
    from metasre.agents.policies import HINTED, PROBES, SHOTGUNS
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
        print(
            f"{'scenario':<42} {'ref':>5} {'expert':>12} {'random':>7} {'probes':>7}"
            f" {'shotgun':>7} {'hints':>6}"
        )
    for sid in ids:
        v = validate_scenario(sid, seeds, args.random_seeds)
        reports.append(v.to_dict())
        failed += not v.ok
        if not args.json:
            expert = f"{min(v.expert):.2f}/{statistics.fmean(v.expert):.2f}" if v.expert else "-"
            worst = [
                max((max(v.probes.get(name, [0.0])) for name in group), default=0.0)
                for group in (PROBES, SHOTGUNS, HINTED)
            ]
            print(
                f"{sid:<42} {min(v.reference, default=0):>5.2f} {expert:>12} "
                f"{statistics.fmean(v.random) if v.random else 0:>7.3f} {worst[0]:>7.3f}"
                f" {worst[1]:>7.3f} {worst[2]:>6.3f}  {'ok' if v.ok else 'FAIL'}"
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
                seat_grace_seconds=args.seat_grace_seconds,
            ),
            tls_cert=Path(args.tls_cert) if args.tls_cert else None,
            tls_key=Path(args.tls_key) if args.tls_key else None,
            admin_token=os.environ.get(args.admin_token_env) or None,
            grace_seconds=args.grace_seconds,
            store_path=None if args.no_store else Path(args.store),
            handover=args.handover,
            # taking over from a server that hands over: wait while it drains
            store_wait_seconds=HANDOVER_WAIT_SECONDS if args.handover else 0.0,
            manage_gc=True,  # the server owns this process
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # The sandbox's fork servers must start before any gRPC thread exists.
    from metasre.simulator.sandbox import WeakIsolationError

    try:
        prepare_sandbox(weak_isolation=args.allow_weak_isolation or _weak_from_env())
    except WeakIsolationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    def ready(server: MetasreServer) -> None:
        # One JSON line on stdout says where to connect (logs go to stderr).
        print(json.dumps({"event": "serving", "address": server.address}), flush=True)

    from metasre.service.store import StoreError

    try:
        asyncio.run(serve(config, ready))
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _export(args: argparse.Namespace) -> int:
    import contextlib
    from pathlib import Path

    from metasre.service.export import episodes, write_jsonl
    from metasre.service.store import StoreError, TrajectoryStore

    path = Path(args.store)
    if not path.is_file():
        print(f"error: no trajectory store at {path} (metasre serve --store PATH)", file=sys.stderr)
        return 2
    try:
        store = TrajectoryStore(path)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        with contextlib.ExitStack() as stack:
            out = (
                sys.stdout
                if args.out == "-"
                else stack.enter_context(open(args.out, "w", encoding="utf-8"))
            )
            n = write_jsonl(episodes(store, args.session or (), unfinished=args.all), out)
    except LookupError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    finally:
        store.close()
    where = "stdout" if args.out == "-" else args.out
    print(f"exported {n} episodes from {path} to {where}", file=sys.stderr)
    return 0


def _loadtest(args: argparse.Namespace) -> int:
    from metasre.cli.loadtest import main as loadtest

    return loadtest(args)


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    from metasre.service.version import PROTOCOL_VERSION, SERVER_VERSION

    parser = argparse.ArgumentParser(prog="metasre", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs on stderr")
    parser.add_argument(
        "--version",
        action="version",
        version=f"metasre {SERVER_VERSION} (protocol {PROTOCOL_VERSION})",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("scenarios", help="list the registered scenarios")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_scenarios)
    p = sub.add_parser(
        "demo", help="serve on a free port and watch the scripted team solve an incident over gRPC"
    )
    p.add_argument("--scenario", default="payment-bad-deploy", help="scenario id or name")
    p.add_argument("--seed", type=int, default=0, help="the incident's seed")
    p.add_argument(
        "--policy",
        default="FREE_FOR_ALL",
        choices=("FREE_FOR_ALL", "ROUND_ROBIN", "SIMULTANEOUS"),
        help="turn policy",
    )
    p.add_argument(
        "--store",
        type=Path,
        default=Path("metasre.db"),
        help="trajectory store file (default ./metasre.db)",
    )
    p.set_defaults(func=_demo)
    p = sub.add_parser("health", help="ask a server's gRPC health service; exit 0 if serving")
    p.add_argument("--target", default="127.0.0.1:50051", help="host:port of the server")
    p.add_argument("--service", default="", help="service name ('' for the whole server)")
    p.add_argument("--timeout", type=float, default=3.0, help="seconds to wait")
    p.set_defaults(func=_health)
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
    p.add_argument(
        "--seat-grace-seconds",
        type=float,
        default=60.0,
        help="how long a dropped stream's seat waits for its agent to resume (0: not at all)",
    )
    p.add_argument("--tls-cert", help="PEM certificate chain (TLS needs --tls-key too)")
    p.add_argument("--tls-key", help="PEM private key")
    p.add_argument(
        "--admin-token-env",
        default="METASRE_ADMIN_TOKEN",
        help="environment variable holding the admin token for control calls "
        "(default METASRE_ADMIN_TOKEN; unset means no token needed)",
    )
    p.add_argument("--grace-seconds", type=float, default=5.0, help="drain time on shutdown")
    p.add_argument(
        "--store",
        default="metasre.db",
        help="SQLite trajectory store recording every session and call (default metasre.db in "
        "the working directory; created if missing)",
    )
    p.add_argument("--no-store", action="store_true", help="record nothing (no trajectory store)")
    p.add_argument(
        "--handover",
        action="store_true",
        help="on SIGTERM, leave open sessions in the store for the next server on it (agents "
        "resume their seats there) instead of closing them: restarts and deploys lose nothing;"
        " and at start, wait up to 60 s for a server still on the store to hand it over (any "
        "other server on the store is refused with exit code 4)",
    )
    p.add_argument(
        "--allow-weak-isolation",
        action="store_true",
        help="serve even where the sandbox cannot have every required layer (Landlock, "
        "seccomp): agent code is then less contained; logged loudly and shown in GetServerInfo "
        "(other commands: METASRE_ALLOW_WEAK_ISOLATION=1)",
    )
    p.set_defaults(func=_serve)
    p = sub.add_parser(
        "export", help="write stored episodes as JSONL, one chat-form trajectory per line"
    )
    p.add_argument(
        "--store", default="metasre.db", help="the trajectory store (default metasre.db)"
    )
    p.add_argument("--out", default="-", help="output file, - for stdout (default)")
    p.add_argument(
        "--session", action="append", metavar="ID", help="only this session (repeatable)"
    )
    p.add_argument(
        "--all", action="store_true", help="include episodes that never ended (grade null)"
    )
    p.set_defaults(func=_export)
    p = sub.add_parser(
        "loadtest",
        help="hundreds of concurrent sessions against a fresh server: errors, grades, memory, "
        "latency",
    )
    p.add_argument("--sessions", type=int, default=200, help="sessions in the main wave")
    p.add_argument("--warmup", type=int, default=50, help="sessions before the RSS baseline")
    p.add_argument("--seed", type=int, default=0, help="seed of the agents' choices")
    p.add_argument("--drop-rate", type=float, default=0.05, help="calls whose stream drops")
    p.add_argument("--bad-rate", type=float, default=0.2, help="sessions sending bad requests")
    p.add_argument("--rss-tolerance-mb", type=float, default=40.0, help="RSS growth allowed")
    p.add_argument(
        "--rss-tolerance-pct", type=float, default=25.0, help="or this %% of the baseline"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_loadtest)
    add_rollout_parsers(sub)  # rollout, llm
    return parser


def _configure_logging(verbose: bool, as_json: bool = False, *, once: bool = False) -> None:
    # Logs go to stderr so that stdout stays clean for tables and --json. `once`: nothing will
    # configure logging again in this process, so each logger is built on its first use and
    # kept, rather than rebuilt by structlog's proxy on every call and bind (about 6 us each).
    processors: list[structlog.typing.Processor] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso"),
        # Tracebacks as JSON, without frame locals: those would carry the failing call's tokens.
        structlog.processors.ExceptionRenderer(
            structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
        ),
        structlog.processors.JSONRenderer(),
    ]
    structlog.configure(
        processors=processors if as_json else structlog.get_config()["processors"],
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.DEBUG if verbose else logging.INFO if as_json else logging.WARNING
        ),
        cache_logger_on_first_use=once,
    )


def _weak_from_env() -> bool:
    return os.environ.get("METASRE_ALLOW_WEAK_ISOLATION") == "1"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line."""
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose, as_json=args.command == "serve", once=argv is None)
    from metasre.simulator.sandbox import WeakIsolationError, allow_weak_isolation

    if _weak_from_env():
        allow_weak_isolation(True)
    from metasre.agents.errors import ClientError
    from metasre.service.store_lock import StoreInUseError

    try:
        code: int = args.func(args)
    except WeakIsolationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except StoreInUseError as exc:  # serve or demo on a store another server holds
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_STORE_IN_USE
    except ClientError as exc:
        # the server refused: one line saying why, and what to pass when it is a credential
        hint = ""
        if exc.reason in ("TOKEN_MISSING", "TOKEN_INVALID"):
            hint = " (give the server's admin token with --admin-token-env NAME; default"
            hint += " METASRE_ADMIN_TOKEN)"
        print(f"error: the server refused: {exc}{hint}", file=sys.stderr)
        return 3
    return code


if __name__ == "__main__":
    sys.exit(main())
