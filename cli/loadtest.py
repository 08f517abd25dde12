"""`metasre loadtest`: hundreds of concurrent sessions against a real `metasre serve`; a verdict.

It starts `metasre serve --store` as a child process (so the server's memory is its own), warms it
with a small wave, takes the server's resident memory (RSS) as the baseline, then runs the main
wave: every session at once, each played by the scripted expert or the random baseline over the
wire. Some agents drop their stream mid-call (no goodbye), resume with the resume token and retry
the call under the same call_id; some send bad requests first (unknown tool, wrong argument
types, another seat's token, a call after the episode ended), whose refusals are expected.

The verdict: no unexpected error (anything but those refusals: an INTERNAL, a timeout, a lost
stream nobody dropped, an error line in the server's log), every episode ended and graded
(final), and the server's RSS, once every session is closed, back within the tolerance of the
baseline. Python keeps freed memory in its own pools and glibc's arenas, so a server that frees
everything still does not shrink to the byte: the tolerance is max(`--rss-tolerance-mb`,
`--rss-tolerance-pct` of the baseline); a leak of per-session state (hundreds of episodes, logs,
streams) is far above it. Latency of every tool call (client-side: sent to result, retries
included) is printed as percentiles.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from ..agents.client import AgentConnection, MetasreClient
from ..agents.errors import ClientError, from_rpc_error
from ..agents.policies.base import Policy, ToolReply
from ..agents.policies.expert import ExpertPolicy
from ..agents.policies.random_agent import RandomPolicy
from ..service.process import start_serve, stop_child
from .arguments import add_command, fraction, non_negative_int, positive_int
from .connection import Connection, add_connection_flags
from .errors import ExitCode, UsageError
from .interrupt import Interrupt
from .pressure import rss_mb

SCENARIOS = (
    "meta-sre/payment-bad-deploy-v2",
    "meta-sre/ad-ranking-crash-v2",
    "meta-sre/user-service-oom-v2",
    "meta-sre/migration-cascade-v3",
)
EXPECTED = {"INVALID_ARGUMENTS", "UNKNOWN_TOOL", "TOKEN_INVALID", "EPISODE_OVER"}
"""Reasons of the refusals the bad requests ask for."""
CALL_TIMEOUT = 120.0


@dataclass
class LoadReport:
    """What a load run measured."""

    sessions: int = 0
    graded: int = 0
    resolved: int = 0
    calls: int = 0
    drops: int = 0
    retried_once: int = 0
    """Calls retried under the same call_id after a drop (applied once: checked)."""
    expected_errors: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0
    rss_baseline_mb: float = 0.0
    rss_peak_mb: float = 0.0
    rss_after_mb: float = 0.0
    rss_tolerance_mb: float = 0.0
    interrupted: bool = False
    """Ctrl-C: sessions not yet created were skipped, those under way ended early."""
    skipped: int = 0

    @property
    def rss_ok(self) -> bool:
        """The server's memory came back to its baseline, within the tolerance."""
        return self.rss_after_mb <= self.rss_baseline_mb + self.rss_tolerance_mb

    @property
    def ok(self) -> bool:
        """Zero unexpected errors, every episode graded, memory back to baseline."""
        return (
            not self.interrupted
            and not self.unexpected
            and self.graded == self.sessions
            and self.rss_ok
        )

    def latency(self) -> dict[str, float]:
        """Call latency percentiles in milliseconds."""
        xs = sorted(self.latencies_ms) or [0.0]

        def pct(p: float) -> float:
            return round(xs[min(len(xs) - 1, int(p / 100 * len(xs)))], 1)

        return {
            "p50": pct(50),
            "p90": pct(90),
            "p99": pct(99),
            "max": round(xs[-1], 1),
            "mean": round(statistics.fmean(xs), 1),
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain data for --json."""
        return {
            "ok": self.ok,
            "interrupted": self.interrupted,
            "skipped": self.skipped,
            "sessions": self.sessions,
            "graded": self.graded,
            "resolved": self.resolved,
            "calls": self.calls,
            "calls_per_second": round(self.calls / self.seconds, 1) if self.seconds else 0.0,
            "drops": self.drops,
            "retried_once": self.retried_once,
            "expected_errors": dict(self.expected_errors),
            "unexpected": self.unexpected[:20],
            "unexpected_count": len(self.unexpected),
            "seconds": round(self.seconds, 2),
            "latency_ms": self.latency(),
            "rss_mb": {
                "baseline": round(self.rss_baseline_mb, 1),
                "peak": round(self.rss_peak_mb, 1),
                "after": round(self.rss_after_mb, 1),
                "tolerance": round(self.rss_tolerance_mb, 1),
                "ok": self.rss_ok,
            },
        }

    def render(self) -> str:
        """A human summary."""
        d = self.to_dict()
        lat, rss = d["latency_ms"], d["rss_mb"]
        return "\n".join(
            [
                f"sessions {self.sessions}, graded {self.graded}, resolved {self.resolved}, "
                f"in {d['seconds']} s",
                f"calls {self.calls} ({d['calls_per_second']}/s), drops and resumes "
                f"{self.drops}, calls retried after a drop {self.retried_once}",
                f"latency ms: p50 {lat['p50']} p90 {lat['p90']} p99 {lat['p99']} "
                f"max {lat['max']} mean {lat['mean']}",
                f"expected refusals: {dict(self.expected_errors)}",
                f"unexpected errors: {len(self.unexpected)}"
                + (f" (first: {self.unexpected[0]})" if self.unexpected else ""),
                f"server RSS MB: baseline {rss['baseline']}, peak {rss['peak']}, after "
                f"{rss['after']} (tolerance +{rss['tolerance']}): "
                + ("back to baseline" if rss["ok"] else "NOT back to baseline"),
                "INTERRUPTED: partial figures; sessions not started: " + str(self.skipped)
                if self.interrupted
                else "OK"
                if self.ok
                else "FAILED",
            ]
        )


class Player:
    """One seat's agent: a sync policy on a worker thread, its calls carried on the loop."""

    def __init__(
        self,
        conn: AgentConnection,
        loop: asyncio.AbstractEventLoop,
        report: LoadReport,
        rng: random.Random,
        drop_rate: float,
        stop: threading.Event,
    ) -> None:
        self.stop = stop
        self.conn = conn
        self.loop = loop
        self.report = report
        self.rng = rng
        self.drop_rate = drop_rate
        self.done = False

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        """The policy's ToolCaller: blocks its worker thread until the call is answered."""
        if self.stop.is_set():  # Ctrl-C: the episode ends here, its session is closed after
            self.done = True
            return ToolReply(False, "interrupted", {}, True, "interrupted")
        future = asyncio.run_coroutine_threadsafe(self.call(tool, dict(args)), self.loop)
        return future.result(CALL_TIMEOUT + 30)

    async def call(self, tool: str, args: dict[str, Any]) -> ToolReply:
        """One call over the wire (sometimes dropped and retried); refusals become replies."""
        started = time.perf_counter()
        call_id = self.conn.new_call_id()
        try:
            if self.rng.random() < self.drop_rate:
                result = await self._dropped_call(tool, args, call_id)
            else:
                result = await asyncio.wait_for(
                    self.conn.call(tool, args, call_id=call_id), CALL_TIMEOUT
                )
        except ClientError as exc:
            self._refused(exc, tool)
            return ToolReply(False, str(exc), {}, exc.reason == "EPISODE_OVER", exc.reason)
        except TimeoutError:
            self.report.unexpected.append(f"{tool}: no answer in {CALL_TIMEOUT:g} s")
            return ToolReply(False, "timeout", {}, True, "timeout")
        self.report.calls += 1
        self.report.latencies_ms.append((time.perf_counter() - started) * 1000)
        self.done = self.done or result.done
        return ToolReply(
            result.ok, result.text, result.data, result.done, result.error_code or None
        )

    async def _dropped_call(self, tool: str, args: dict[str, Any], call_id: str) -> Any:
        """Send the call, drop the stream while it is in flight, resume, retry the same id."""
        sent = asyncio.ensure_future(self.conn.call(tool, args, call_id=call_id))
        await asyncio.sleep(self.rng.random() * 0.005)
        await self.conn.abort()
        with contextlib.suppress(ClientError):
            await sent
        self.report.drops += 1
        await self.conn.join(resume=True)
        result = await asyncio.wait_for(self.conn.call(tool, args, call_id=call_id), CALL_TIMEOUT)
        self.report.retried_once += 1
        return result

    def _refused(self, exc: ClientError, tool: str) -> None:
        if exc.reason in EXPECTED:
            self.report.expected_errors[exc.reason or exc.code] += 1
        else:
            self.report.unexpected.append(f"{tool}: {exc.code} {exc.reason}: {str(exc)[:200]}")


async def bad_requests(
    client: MetasreClient, conn: AgentConnection, session_id: str, report: LoadReport
) -> None:
    """Refusals the agent asks for: each must come back as the expected error."""
    attempts: list[tuple[str, Any]] = [
        ("UNKNOWN_TOOL", conn.call("no_such_tool", {})),
        ("INVALID_ARGUMENTS", conn.call("read_logs", {"service": ["x"], "lines": "many"})),
        ("INVALID_ARGUMENTS", conn.call("view_file", {"path": "x" * 10_000, "extra": {"a": 1}})),
        ("TOKEN_INVALID", client.agent(session_id, "not-a-token").join()),
    ]
    for reason, attempt in attempts:
        try:
            await asyncio.wait_for(attempt, CALL_TIMEOUT)
        except ClientError as exc:
            if exc.reason == reason:
                report.expected_errors[reason] += 1
                continue
            report.unexpected.append(f"bad request: {exc.code} {exc.reason} instead of {reason}")
        else:
            report.unexpected.append(f"bad request accepted instead of {reason}")


async def play_session(
    client: MetasreClient,
    index: int,
    seed: int,
    report: LoadReport,
    pool: ThreadPoolExecutor,
    drop_rate: float,
    bad_rate: float,
    stop: threading.Event,
    tools: list[dict[str, Any]],
) -> None:
    """Create, play to the end, check the grade, close.

    `tools`: the server's tools as ListTools gives them (the random agent's report vocabulary).
    """
    if stop.is_set():
        report.skipped += 1
        return
    rng = random.Random(seed * 7919 + index)
    scenario = SCENARIOS[index % len(SCENARIOS)]
    expert = index % 2 == 0
    loop = asyncio.get_running_loop()
    try:
        handle = await client.create_session(scenario, seed=index % 3, seats=["agent"])
        conn = client.agent(handle.id, handle.tokens["agent"])
        await conn.join()
        player = Player(conn, loop, report, rng, drop_rate, stop)
        if rng.random() < bad_rate:
            await bad_requests(client, conn, handle.id, report)
        policy: Policy = ExpertPolicy() if expert else RandomPolicy(index, tools)
        observation = dict(conn.observation)
        await loop.run_in_executor(pool, policy.play, player, observation)
        if not player.done:
            report.unexpected.append(f"session {index}: the policy stopped before the end")
        if rng.random() < bad_rate:  # a call after the end
            try:
                await conn.call("get_alerts", {})
                report.unexpected.append("a call after the episode ended was applied")
            except ClientError as exc:
                player._refused(exc, "get_alerts")
        grade = (await client.get_grade(handle.id))["grade"]
        if grade.get("final"):
            report.graded += 1
            report.resolved += bool(grade.get("resolved"))
        elif stop.is_set():
            pass  # cut short by Ctrl-C: not a fault of the server
        else:
            report.unexpected.append(f"session {index}: episode not graded (final false)")
        await conn.close()
        await client.close_session(handle.id)
    except ClientError as exc:
        report.unexpected.append(f"session {index}: {exc.code} {exc.reason}: {str(exc)[:200]}")
    except Exception as exc:  # the verdict reports it; the run goes on
        report.unexpected.append(f"session {index}: {type(exc).__name__}: {exc}")


async def wave(
    client: MetasreClient,
    n: int,
    seed: int,
    report: LoadReport,
    drop: float,
    bad: float,
    stop: threading.Event | None = None,
) -> None:
    """Play `n` sessions at once (none starts once `stop` is set)."""
    stop = stop or threading.Event()
    tools = await client.list_tools()
    with ThreadPoolExecutor(max_workers=max(4, n), thread_name_prefix="policy") as pool:
        await asyncio.gather(
            *(play_session(client, i, seed, report, pool, drop, bad, stop, tools) for i in range(n))
        )


async def run_load(
    sessions: int = 200,
    *,
    warmup: int = 50,
    seed: int = 0,
    drop_rate: float = 0.05,
    bad_rate: float = 0.2,
    rss_tolerance_mb: float = 40.0,
    rss_tolerance_pct: float = 25.0,
    workdir: Path | None = None,
    interrupt: Interrupt | None = None,
) -> LoadReport:
    """Start a server, warm it, run the main wave, measure; see the module docstring."""
    report = LoadReport(sessions=sessions)
    stop = threading.Event()
    if interrupt is not None:
        interrupt.on_interrupt(stop.set)
    with contextlib.ExitStack() as stack:
        work = workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="load-")))
        log = work / "server.log"
        stderr = stack.enter_context(log.open("w"))
        try:
            proc, address = await start_serve(
                "--port",
                "0",
                "--store",
                str(work / "load.db"),
                "--max-sessions",
                str(max(sessions, warmup) + 16),
                stderr=stderr,
                new_session=True,
            )
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}: {log.read_text()[-2000:]}") from None
        if interrupt is not None:
            interrupt.kill_at_once(proc.pid)
        print(
            f"load test: server at {address} (pid {proc.pid}), {warmup} warm-up sessions, "
            f"then {sessions} at once",
            file=sys.stderr,
            flush=True,
        )
        try:
            options = (("grpc.max_reconnect_backoff_ms", 1000),)
            async with MetasreClient(address, options=options) as client:
                warm = LoadReport(sessions=warmup)
                await wave(client, warmup, seed + 1, warm, drop_rate, bad_rate, stop)
                report.unexpected += [f"warm-up: {u}" for u in warm.unexpected]
                await asyncio.sleep(0.5)
                report.rss_baseline_mb = rss_mb(proc.pid)

                peak = 0.0

                async def sample() -> None:
                    nonlocal peak
                    while True:
                        peak = max(peak, rss_mb(proc.pid))
                        await asyncio.sleep(0.2)

                sampler = asyncio.create_task(sample())
                started = time.perf_counter()
                await wave(client, sessions, seed, report, drop_rate, bad_rate, stop)
                report.seconds = time.perf_counter() - started
                sampler.cancel()
                report.rss_peak_mb = peak
                await asyncio.sleep(1.0)  # the server lets go of closed sessions' streams
                report.rss_after_mb = rss_mb(proc.pid)
                report.rss_tolerance_mb = max(
                    rss_tolerance_mb, report.rss_baseline_mb * rss_tolerance_pct / 100
                )
                report.interrupted = stop.is_set()
                if report.interrupted:
                    report.sessions -= report.skipped
        finally:
            await stop_child(proc)
        if interrupt is not None:
            interrupt.forget(proc.pid)
        for entry in log.read_text().splitlines():
            if entry.startswith("{") and json.loads(entry).get("level") in ("error", "critical"):
                report.unexpected.append(f"server logged: {entry[:300]}")
    return report


def add_parser(sub: Any) -> None:
    """Register `loadtest` on the command line's subparsers."""
    p = add_command(
        sub,
        "loadtest",
        "load a server: hundreds of sessions, an overload of CreateSessions, or a slow reader",
        "Load a server and report what it measured (exit 1 when the verdict is no).\n\n"
        "full: hundreds of concurrent sessions (drops, resumes, bad requests) against a fresh "
        "server of its own: errors, grades, latency, and its memory back to baseline.\n\n"
        "overload: --sessions concurrent CreateSessions (default twice the server's cap): "
        "accepted vs refused, latency of each, and whether refusals carry RetryInfo.\n\n"
        "slow-reader: one seat joins and reads nothing while its teammate makes --calls "
        "calls: the server's memory before and after, and whether the stalled seat was cut "
        "off.\n\nCtrl-C stops starting sessions, closes those under way and prints the "
        "partial figures (exit 130).",
    )
    p.add_argument(
        "--mode", choices=("full", "overload", "slow-reader"), default="full", help="what to load"
    )
    add_connection_flags(
        p, local="start a server of its own (full mode always does: it measures its memory)"
    )
    p.add_argument(
        "--sessions",
        type=positive_int,
        help="full: sessions in the main wave (default 200); overload: concurrent "
        "CreateSessions (default twice the server's session cap)",
    )
    p.add_argument(
        "--warmup", type=non_negative_int, default=50, help="full: sessions before the RSS baseline"
    )
    p.add_argument(
        "--seed", type=non_negative_int, default=0, help="full: seed of the agents' choices"
    )
    p.add_argument(
        "--drop-rate", type=fraction, default=0.05, help="full: calls whose stream drops"
    )
    p.add_argument(
        "--bad-rate", type=fraction, default=0.2, help="full: sessions sending bad requests"
    )
    p.add_argument("--rss-tolerance-mb", type=float, default=40.0, help="full: RSS growth allowed")
    p.add_argument(
        "--rss-tolerance-pct", type=float, default=25.0, help="full: or this %% of the baseline"
    )
    p.add_argument(
        "--cap",
        type=positive_int,
        default=32,
        help="overload: the session cap of the server it starts itself",
    )
    p.add_argument(
        "--calls", type=positive_int, default=300, help="slow-reader: the teammate's calls"
    )
    p.add_argument(
        "--idle-seat-seconds",
        type=float,
        default=900.0,
        help="slow-reader: the idle-seat limit of the server it starts itself",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=main)


def main(args: Any) -> int:
    """Run `metasre loadtest`; exit 0 when the verdict is OK (130 on Ctrl-C)."""
    connection = Connection.from_args(args)
    if args.mode == "full" and connection.target:
        raise UsageError(
            "the full load test starts a server of its own (it measures that server's "
            "memory); drop --target and $METASRE_TARGET, or use --mode overload or slow-reader"
        )
    try:
        return _run(args, connection)
    except grpc.aio.AioRpcError as exc:
        # A refusal or no server at all, while setting the load up: one line and its exit code
        # (3 or 10), as every command says it, not a traceback.
        raise from_rpc_error(exc) from None


def _run(args: Any, connection: Connection) -> int:
    from . import pressure

    with Interrupt("no new session starts; closing those under way") as interrupt:
        if args.mode == "overload":
            over = asyncio.run(pressure.overload(connection, interrupt, args.sessions, args.cap))
            print(json.dumps(pressure.as_dict(over), indent=2) if args.json else over.render())
            return ExitCode.INTERRUPTED if over.interrupted else ExitCode.OK
        if args.mode == "slow-reader":
            slow = asyncio.run(
                pressure.slow_reader(connection, interrupt, args.calls, args.idle_seat_seconds)
            )
            print(json.dumps(pressure.as_dict(slow), indent=2) if args.json else slow.render())
            return ExitCode.INTERRUPTED if slow.interrupted else ExitCode.OK
        report = asyncio.run(
            run_load(
                args.sessions or 200,
                warmup=args.warmup,
                seed=args.seed,
                drop_rate=args.drop_rate,
                bad_rate=args.bad_rate,
                rss_tolerance_mb=args.rss_tolerance_mb,
                rss_tolerance_pct=args.rss_tolerance_pct,
                interrupt=interrupt,
            )
        )
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.render())
    if report.interrupted:
        return ExitCode.INTERRUPTED
    return ExitCode.OK if report.ok else ExitCode.FAILED
