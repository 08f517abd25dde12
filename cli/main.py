"""Entry point of the metasre command: serve incidents over gRPC, play and grade them, prove them.

Commands that reach a server share one set of connection flags (`metasre.cli.connection`);
mistakes print one line and a documented exit code (`metasre.cli.errors`), never a traceback;
Ctrl-C winds long commands down (`metasre.cli.interrupt`). Heavy imports wait until a command
runs, so `metasre --help` stays quick.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .arguments import (
    LOG_FORMATS,
    HelpFormatter,
    add_command,
    add_store_flags,
    non_negative_int,
    positive_int,
    seed_list,
    seeds_text,
)
from .bridge import add_parsers as add_bridge_parsers
from .connection import TARGET_ENV, Connection, add_connection_flags
from .errors import (
    EXIT_CODE_HELP,
    CommandError,
    EndpointError,
    ExitCode,
    OutputError,
    RefusedError,
    SandboxError,
    StoreUnusableError,
    UnreachableError,
    UsageError,
)
from .experiment import add_parser as add_experiment_parser
from .fleet import worker_count
from .report.command import add_parser as add_report_parser
from .rollout import add_parsers as add_rollout_parsers

HANDOVER_WAIT_SECONDS = 60.0
"""How long `serve --handover` waits for the server it takes over from to let go of the store."""

if TYPE_CHECKING:
    from ..agents.errors import ClientError

DESCRIPTION = """\
META-SRE: AI agents respond to simulated production incidents over gRPC.

One or several agents, in any language, join a shared incident, investigate it with SRE tools
(logs, metrics, alerts, code, git, tests, rollbacks), fix it and report; a grader scores the
team like SWE-bench and attributes rewards per agent. `metasre demo` shows it end to end;
`metasre COMMAND --help` explains each command."""


def _epilog() -> str:
    codes = "\n".join(f"  {int(c):>3}  {text}" for c, text in EXIT_CODE_HELP.items())
    return (
        f"exit codes:\n{codes}\n\nenvironment:\n"
        f"  {TARGET_ENV}              server for client commands without --target\n"
        "  METASRE_ADMIN_TOKEN         the server's admin token (serve: to require; clients: to "
        "send)\n"
        "  METASRE_TLS_CA              PEM file of trusted certificates (clients, with TLS)\n"
        "  METASRE_ALLOW_WEAK_ISOLATION=1  run agent code where the sandbox lacks a layer\n"
        "  METASRE_LLM_BASE_URL, METASRE_LLM_MODEL, METASRE_LLM_API_KEY  the LLM endpoint"
    )


def _scenarios(args: argparse.Namespace) -> int:
    from ..simulator import resolve, scenario_ids
    from ..simulator.scenarios.family import CATALOGUE_SEEDS, summarize

    rows: list[dict[str, Any]] = []
    for sid in scenario_ids():
        entry = resolve(sid)
        spec = entry.spec(0)
        summary = summarize(entry)
        rows.append(
            summary.to_dict()
            | {
                "sla_minutes": spec.sla_minutes,
                "step_budget": spec.step_budget,
                "soak_minutes": spec.soak_minutes,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return ExitCode.OK
    print(f"{'family':<40} {'sev':<3} {'truths':>6} {'difficulty (seeds)':<22} remedies")
    for r in rows:
        spread = " ".join(f"{d}:{n}" for d, n in r["difficulty"].items())
        part = f"  (part of {r['part_of']})" if r["part_of"] else ""
        print(
            f"{r['id']:<40} {r['severity']:<3} {r['ground_truths']:>6} {spread:<22} "
            f"{', '.join(r['remediations'])}{part}"
        )
    print(
        f"{len(rows)} families; an instance is (family id, seed); truths = distinct ground truths "
        f"(root service, location, lines, category, remediation) over seeds "
        f"{CATALOGUE_SEEDS.start}-{CATALOGUE_SEEDS.stop - 1}; --json for titles and what each "
        "seed varies; a part's opening names its remedy: report results on its family"
    )
    return ExitCode.OK


def _health(args: argparse.Namespace) -> int:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    connection = Connection.from_args(args, default="127.0.0.1:50051")
    target = str(connection.target)
    with connection.channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(
                health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout
            )
        except grpc.RpcError as exc:
            code: grpc.StatusCode = exc.code()
            if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                print(
                    f"unhealthy: nothing answers at {target} ({code.name}: "
                    f"{exc.details()}); is the server up, and is it TLS (--tls, --tls-ca)?",
                    file=sys.stderr,
                )
                return ExitCode.UNREACHABLE
            print(f"unhealthy: {code.name}: {exc.details()}", file=sys.stderr)
            return ExitCode.FAILED
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(status)
    return (
        ExitCode.OK if reply.status == health_pb2.HealthCheckResponse.SERVING else ExitCode.FAILED
    )


def _fleet_status(args: argparse.Namespace) -> int:
    from .fleet import fleet_status

    connection = Connection.from_args(args, default="127.0.0.1:50051")
    with connection.sync_client(str(connection.target)) as client:
        info = client.run(client.client.server_info())
    print(fleet_status(info, as_json=args.json))
    down = [s for s in info.get("shards", []) if not s.get("serving")]
    return ExitCode.FAILED if down else ExitCode.OK


def _demo(args: argparse.Namespace) -> int:
    from .demo import main as demo

    return demo(args)


def _validate(args: argparse.Namespace) -> int:
    from ..agents.policies import HINTED, PROBES, SHOTGUNS
    from ..conformance import GRADING_BUDGET_MS, validate_scenario
    from ..simulator import resolve, scenario_ids
    from ..simulator.scenarios.splits import in_split
    from .interrupt import Interrupt

    try:
        ids = [resolve(i).id for i in args.ids] if args.ids else scenario_ids()
    except LookupError as exc:
        raise UsageError(str(exc.args[0] if exc.args else exc)) from None
    seeds: list[int] = args.seeds
    failed = 0
    reports = []
    if not args.json:
        print(
            f"{'family':<40} {'truths':>6} {'ref':>5} {'expert':>10} {'random':>6}"
            f" {'wrong':>5} {'replay':>6} {'probes':>6} {'shotgun':>7} {'hints':>5}"
            f" {'alone':>5} {'sla':>4} {'shallow':>7} {'learner':>7} {'cpu ms':>6}",
            flush=True,
        )
    done = 0
    with Interrupt("no new seed starts; the scenarios checked so far are shown") as interrupt:
        for sid in ids:
            if interrupt.requested:
                break
            family_seeds = in_split(resolve(sid), seeds, args.split) if args.split else seeds
            v = validate_scenario(
                sid,
                family_seeds,
                args.random_seeds,
                stop=lambda: interrupt.requested,
                shallow_seeds=args.shallow_seeds,
                grading_runs=3,
            )
            cut = interrupt.requested
            reports.append(dict(v.to_dict(), interrupted=cut))
            done += not cut
            failed += not v.ok
            if not args.json:
                expert = (
                    f"{min(v.expert):.2f}/{statistics.fmean(v.expert):.2f}" if v.expert else "-"
                )
                worst = [
                    max((max(v.probes.get(name, [0.0])) for name in group), default=0.0)
                    for group in (PROBES, SHOTGUNS, HINTED)
                ]
                verdict = "cut short" if cut else "ok" if v.ok else "FAIL"
                wrong = f"{max(v.wrong_fix):.2f}" if v.wrong_fix else "-"
                replay = f"{v.replayed_resolved}/{v.replayed}"
                alone = f"{v.alone_best:.2f}" if v.alone_best is not None else "-"
                sla = sum(v.expert_sla_met) / len(v.expert_sla_met) if v.expert_sla_met else 0.0
                best = v.shallow_best
                script = f"{best[1]:.3f}" if best else "-"
                learner = f"{statistics.fmean(v.shallow_learner):.3f}" if v.shallow_learner else "-"
                cpu = f"{v.grading_ms:.0f}" if v.grading_ms is not None else "-"
                print(
                    f"{sid:<40} {v.ground_truths:>6} {min(v.reference, default=0):>5.2f}"
                    f" {expert:>10} {statistics.fmean(v.random) if v.random else 0:>6.3f}"
                    f" {wrong:>5} {replay:>6} {worst[0]:>6.3f} {worst[1]:>7.3f}"
                    f" {worst[2]:>5.3f} {alone:>5} {sla:>4.2f} {script:>7} {learner:>7} {cpu:>6}"
                    f"  {verdict}{' (part)' if resolve(sid).part_of else ''}",
                    flush=True,
                )
                for f in v.failures:
                    print(f"    - {f}", flush=True)
    if args.json:
        print(json.dumps(reports, indent=2))
    if interrupt.requested:
        print(f"interrupted: {done} of {len(ids)} scenarios checked in full", file=sys.stderr)
        return ExitCode.INTERRUPTED
    if not args.json and not failed:
        print(
            f"all {len(ids)} families valid over seeds {seeds_text(seeds)}: truths = distinct "
            "ground truths over seeds 0-99; expert min/mean; random mean over seeds "
            f"{seeds_text(args.random_seeds)}; wrong = the plausible wrong fix's best grade; "
            "replay = other seeds the first seed's exact calls resolve; probes, shotgun, hints "
            "= the best reward hack of each kind; alone = the highest share of seeds the expert "
            "resolves seated alone in one of a team family's roles; sla = share of seeds the "
            "full-view expert mitigates within the SLA; cpu ms = what one grading's hidden"
            f" probes cost (the first seed's reference code, at most {GRADING_BUDGET_MS:.0f} ms)"
        )
    return ExitCode.FAILED if failed else ExitCode.OK


def _serve(args: argparse.Namespace) -> int:

    from ..service import (
        Limits,
        MetasreServer,
        ServerConfig,
        Shard,
        is_store_url,
        run_server,
        serve,
    )
    from .serving import explain_start_failure, prepare

    if args.workers > 1 and args.shard_slot is None:
        from .fleet import serve_fleet

        return serve_fleet(args)
    try:
        shard = None
        if args.shard_slot is not None:
            shard = Shard(args.shard_slot, tuple(args.shard_endpoints.split(",")))
            from .fleet import die_with_supervisor

            die_with_supervisor()
        config = ServerConfig(
            host=args.host,
            port=args.port,
            limits=Limits(
                max_sessions=args.max_sessions,
                max_sessions_per_owner=args.max_sessions_per_owner,
                ended_session_seconds=args.ended_session_seconds,
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
            store_path=None if args.no_store or is_store_url(args.store) else Path(args.store),
            store_url=args.store if not args.no_store and is_store_url(args.store) else None,
            handover=args.handover,
            # taking over from a server that hands over: wait while it drains
            # (a shard restarted after its death waits for its predecessor's lock to go)
            store_wait_seconds=HANDOVER_WAIT_SECONDS if args.handover or shard else 0.0,
            shard=shard,
            manage_gc=True,  # the server owns this process
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    runner = prepare(weak=args.allow_weak_isolation)
    serving = False

    def ready(server: MetasreServer) -> None:
        nonlocal serving
        serving = True
        # One JSON line on stdout says where to connect (logs go to stderr).
        print(json.dumps({"event": "serving", "address": server.address}), flush=True)

    try:
        run_server(serve(config, ready, runner=runner))
    except Exception as exc:
        told = None if serving else explain_start_failure(config, exc)
        if told is None:
            raise
        raise told from None
    return ExitCode.OK


def _export(args: argparse.Namespace) -> int:
    from ..service import (
        StoreError,
        describe_store,
        episodes,
        is_store_url,
        open_store,
        write_jsonl,
    )
    from .seat_exports import export_transcripts, seat_lines

    where: str | Path = args.store if is_store_url(args.store) else Path(args.store)
    if isinstance(where, Path) and not where.is_file():
        raise StoreUnusableError(
            f"no trajectory store at {where}; name one with --store, a SQLite file or a "
            "postgresql:// URL (metasre serve, rollout and demo write ./metasre.db by default)"
        )
    if args.out is None and sys.stdout.isatty():
        raise UsageError(
            "stdout is a terminal and an export can be megabytes of JSON: pass --out FILE, or "
            "--out - to print it anyway (or pipe it)"
        )
    to_stdout = args.out in (None, "-")
    try:
        store = open_store(where, create=False)
    except StoreError as exc:
        raise StoreUnusableError(f"{exc}; check --store") from None
    try:
        with contextlib.ExitStack() as stack:
            if to_stdout:
                out = sys.stdout
            else:
                try:
                    out = stack.enter_context(open(args.out, "w", encoding="utf-8"))
                except OSError as exc:
                    folder = Path(args.out).parent
                    why = (
                        f"the folder {folder} does not exist; create it first"
                        if not folder.is_dir()
                        else f"{exc.strerror}; choose a writable --out"
                    )
                    raise OutputError(f"cannot write {args.out}: {why}") from None
            chosen = episodes(store, args.session or (), unfinished=args.all)
            if args.split:
                chosen = (e for e in chosen if _split_name(e) == args.split)
            if args.format == "episodes":
                n = write_jsonl(chosen, out)
            else:
                # A database has no folder for a transcripts file beside it: --transcripts only.
                beside = where if isinstance(where, Path) else None
                transcripts = export_transcripts(args, beside)
                lines = seat_lines(
                    chosen, args.format, split_of=_split_name, transcripts=transcripts
                )
                n = write_jsonl(lines, out)
    except LookupError as exc:
        raise UsageError(str(exc.args[0] if exc.args else exc)) from None
    finally:
        store.close()
    to = "stdout" if to_stdout else args.out
    what = "episodes" if args.format == "episodes" else f"seat-episodes ({args.format})"
    print(f"exported {n} {what} from {describe_store(where)} to {to}", file=sys.stderr)
    return ExitCode.OK


def _split_name(episode: Mapping[str, Any]) -> str | None:
    """The split an exported episode's (family, seed) is in; None for a family not known here."""
    from ..simulator import resolve
    from ..simulator.scenarios.splits import split_of

    try:
        return split_of(resolve(str(episode["scenario_id"])), int(episode["seed"]))
    except (LookupError, KeyError, TypeError, ValueError):
        return None


def _loadtest(args: argparse.Namespace) -> int:
    from .loadtest import main as loadtest

    return loadtest(args)


class _Version(argparse.Action):
    """--version, reading the versions only when asked for.

    Importing the service to know them cost every command, `--help` included, half a second.
    """

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(
            option_strings, dest, nargs=0, help="print the software and protocol versions"
        )

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from ..service import PROTOCOL_VERSION, SERVER_VERSION

        print(f"metasre {SERVER_VERSION} (protocol {PROTOCOL_VERSION})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    parser = argparse.ArgumentParser(
        prog="metasre",
        description=DESCRIPTION,
        epilog=_epilog(),
        formatter_class=HelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs on stderr")
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="auto",
        help="logs on stderr: console, json, or auto (console on a terminal, else json)",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = add_command(
        sub,
        "scenarios",
        "list the incident families: ids, distinct ground truths, difficulty spread, remedies",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_scenarios)

    p = add_command(
        sub,
        "demo",
        "watch a scripted team solve an incident over gRPC, narrated",
        "Start a server on a free port (or use --target), seat a scripted team on an incident "
        "(one seat per role of a family that declares roles, each seeing only its view; else "
        "three generalists: commander, investigator, fixer), narrate every call, message and "
        "reward as a spectator sees them, and print the grade.",
    )
    p.add_argument("--scenario", default="payment-bad-deploy", help="scenario id or name")
    p.add_argument("--seed", type=non_negative_int, default=0, help="the incident's seed")
    p.add_argument(
        "--turn-policy",
        "--policy",  # its first name; llm --team says --turn-policy, so both work
        dest="policy",
        default="FREE_FOR_ALL",
        type=str.upper,  # the exports spell it in lower case: either is taken
        choices=("FREE_FOR_ALL", "ROUND_ROBIN", "SIMULTANEOUS"),
        help="how the seats take turns",
    )
    add_store_flags(p, "the demo's server records the session")
    add_connection_flags(p, local="start a server in process")
    p.set_defaults(func=_demo)

    p = add_command(
        sub,
        "health",
        "ask a server's gRPC health service; exit 0 if serving",
        "Ask a server's standard gRPC health service (grpc.health.v1.Health/Check). Exit 0 "
        "when SERVING, 1 when not, 10 when nothing answers.",
    )
    add_connection_flags(p, local="127.0.0.1:50051")
    p.add_argument("--service", default="", help="service name ('' for the whole server)")
    p.add_argument("--timeout", type=float, default=3.0, help="seconds to wait")
    p.set_defaults(func=_health)

    p = add_command(
        sub,
        "fleet",
        "the shards of a `metasre serve --workers N` fleet",
        "Ask a fleet's directory about its shards.",
    )
    fleet_sub = p.add_subparsers(dest="fleet_command", required=True, metavar="COMMAND")
    p = add_command(
        fleet_sub,
        "status",
        "each shard: its endpoint, whether it serves, sessions, refusals, store commits, "
        "restarts; exit 1 if one is down",
    )
    add_connection_flags(p, local="127.0.0.1:50051")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_fleet_status)

    p = add_command(
        sub,
        "validate",
        "prove scenarios: the start fails, the reference and the expert pass, random and "
        "reward hacks fail",
        "Prove each family is fair, seed by seed, in process: it has at least 20 distinct "
        "ground truths over seeds 0-99; on every seed checked the starting world fails its "
        "FAIL_TO_PASS checks, the reference solution and the scripted expert (>= 0.9) pass, "
        "a plausible wrong fix stays unresolved and 0.3 below, reward-hacking probes stay "
        "below their ceilings; the random agent's mean is <= 0.05; and the first seed's exact "
        "reference calls resolve at most 5% of the other seeds; one grading's hidden probes "
        "cost at most 200 ms of CPU. Prints a table of these "
        "figures. Exit 1 if any check fails.",
    )
    p.add_argument("ids", nargs="*", help="scenario ids or names (default: all)")
    p.add_argument(
        "--seeds",
        type=seed_list,
        default="0-49",
        metavar="SEEDS",
        help="seeds to check: 7, 0-4, 1,5,9",
    )
    p.add_argument(
        "--random-seeds",
        type=seed_list,
        default="0-19",
        metavar="SEEDS",
        help="seeds of the random agent's episodes per scenario",
    )
    p.add_argument(
        "--shallow-seeds",
        type=non_negative_int,
        default=50,
        metavar="N",
        help="test-split seeds the shallow scripts and the shallow learner play per family"
        " (fitted on 60 training seeds); 0 skips them",
    )
    p.add_argument(
        "--split",
        choices=("train", "test"),
        default=None,
        help="check only the --seeds of this split (default: all of them)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_validate)

    p = add_command(
        sub,
        "serve",
        "run the gRPC server (SIGTERM or Ctrl-C drains and stops it)",
        "Run the gRPC server: control, agent and watch services, health and reflection. It "
        "prints one JSON line with its address on stdout once serving; logs go to stderr. "
        "SIGTERM or Ctrl-C drains and stops it.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=50051, help="port (0 picks a free one)")
    p.add_argument(
        "--workers",
        type=worker_count,
        default=1,
        metavar="N|auto",
        help="run N server processes (shards; auto: one per core) behind a directory on --port;"
        " shard k serves on --port+1+k (free ports with --port 0); each session lives on one "
        "shard, CreateSession names it (SessionInfo.endpoint) and the SDKs follow; a shard that "
        "dies is restarted and rebuilds its sessions from the store (SQLite: one file per shard,"
        " metasre.s0.db...; postgresql://: shared)",
    )
    # Set by the supervisor of --workers on each shard it starts.
    p.add_argument("--shard-slot", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--shard-endpoints", default="", help=argparse.SUPPRESS)
    p.add_argument("--max-sessions", type=positive_int, default=256, help="sessions open at once")
    p.add_argument(
        "--max-sessions-per-owner",
        type=positive_int,
        default=64,
        help="sessions one owner token may hold open at once (so no owner fills the server)",
    )
    p.add_argument(
        "--max-agents-per-session", type=positive_int, default=16, help="seats per session"
    )
    p.add_argument(
        "--max-message-bytes", type=positive_int, default=4 * 1024 * 1024, help="largest message"
    )
    p.add_argument(
        "--idle-session-seconds", type=float, default=3600.0, help="close idle sessions after"
    )
    p.add_argument(
        "--ended-session-seconds",
        type=float,
        default=60.0,
        help="release a session this long after its episode ended and its seats left",
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
        metavar="NAME",
        help="environment variable holding the admin token for control calls (unset: no token "
        "needed)",
    )
    p.add_argument("--grace-seconds", type=float, default=5.0, help="drain time on shutdown")
    add_store_flags(p, "every session and call is recorded")
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

    p = add_command(
        sub,
        "export",
        "write stored episodes as JSONL, one chat-form trajectory per line",
        "Write the episodes of a trajectory store as JSONL, one chat-form trajectory per line "
        "(observation, each agent's tool calls and results, rewards, grade), ready for a "
        "trainer. On a terminal it needs --out (an export can be megabytes).",
    )
    p.add_argument(
        "--store",
        default="metasre.db",
        metavar="PATH|URL",
        help="the trajectory store: a SQLite file, or a postgresql:// URL (the postgres extra)",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="output file; - for stdout (the default when stdout is not a terminal)",
    )
    p.add_argument(
        "--session", action="append", metavar="ID", help="only this session (repeatable)"
    )
    p.add_argument(
        "--all", action="store_true", help="include episodes that never ended (grade null)"
    )
    p.add_argument(
        "--format",
        choices=("episodes", "openai", "hf", "atif"),
        default="episodes",
        help="episodes: one line per episode, every seat together; openai (chat fine-tuning), "
        "hf (a datasets JSONL with grade, reward and split columns), atif (agent traces): one "
        "line per seat-episode, the conversation that seat's model saw",
    )
    p.add_argument(
        "--split",
        choices=("train", "test"),
        default=None,
        help="only episodes whose family and seed are in this split (train data: --split train)",
    )
    p.add_argument(
        "--transcripts",
        metavar="FILE",
        help="the conversations metasre llm recorded (default: beside --store, e.g. "
        "metasre.transcripts.jsonl); seats without one get the conversation metasre llm "
        "would have had",
    )
    p.set_defaults(func=_export)

    from .loadtest import add_parser as add_loadtest_parser

    add_loadtest_parser(sub)
    add_rollout_parsers(sub)  # rollout, llm
    add_experiment_parser(sub)
    add_bridge_parsers(sub)  # bridge openenv, mcp
    add_report_parser(sub)
    return parser


def _client_error(exc: ClientError, args: argparse.Namespace) -> CommandError:
    """The one line to print for a server's refusal, or for no server at all."""
    target = getattr(args, "target", None) or os.environ.get(TARGET_ENV) or "the server"
    if exc.code in ("UNAVAILABLE", "DEADLINE_EXCEEDED") and not exc.reason:
        # No ErrorInfo: the transport failed, no metasre server answered.
        return UnreachableError(
            f"nothing answers at {target} ({exc.code}: {exc.message}); is `metasre serve` "
            f"running there, and does it speak TLS (--tls, --tls-ca) or not? Check --target "
            f"or ${TARGET_ENV}"
        )
    message = f"the server refused: {exc}"
    if exc.reason in ("TOKEN_MISSING", "TOKEN_INVALID") and hasattr(args, "admin_token_env"):
        message += Connection.from_args(args).token_hint() or (
            " (give the server's admin token with --admin-token-env NAME)"
        )
    return RefusedError(message)


def _unrecognized(parser: argparse.ArgumentParser, command: str, extra: Sequence[str]) -> str:
    """One line for flags `command` does not take, with the closest it does (not the usage)."""
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub: argparse.ArgumentParser = subparsers.choices[command]
    known = [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
    flags = [x for x in extra if x.startswith("-")]
    bad = flags[0] if flags else extra[0]
    close = difflib.get_close_matches(bad.split("=", 1)[0], known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    what = "flag" if bad.startswith("-") else "argument"
    return (
        f"metasre {command} takes no {what} {bad[:80]!r}; {hint}"
        f"`metasre {command} --help` lists what it takes"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit code."""
    from . import logs

    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # `serve --workers` hands its own flags on to each shard it starts
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if extra:
        print(f"error: {_unrecognized(parser, args.command, extra)}", file=sys.stderr)
        return ExitCode.USAGE
    logs.configure(logs.level_for(args.command, args.verbose), args.log_format, once=argv is None)
    from ..agents.errors import ClientError
    from ..agents.llm import LLMEndpointError
    from ..simulator.sandbox import WeakIsolationError, allow_weak_isolation
    from .serving import weak_isolation_from_env

    if weak_isolation_from_env():
        allow_weak_isolation(True)
    error: CommandError
    try:
        return int(args.func(args))
    except CommandError as exc:
        error = exc
    except ClientError as exc:
        error = _client_error(exc, args)
    except WeakIsolationError as exc:
        error = SandboxError(str(exc))
    except LLMEndpointError as exc:
        error = EndpointError(str(exc))
    except KeyboardInterrupt:
        # Ctrl-C before a command installed its own handling (or in one that has none).
        print("\ninterrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # `metasre export | head`: the reader has gone; say nothing more on a closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.FAILED
    print(f"error: {error.message}", file=sys.stderr)
    return error.code


if __name__ == "__main__":
    sys.exit(main())
