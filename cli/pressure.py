"""Two load modes that push on one limit each, measured from outside like any client would.

- overload: N concurrent CreateSessions, N twice the server's session cap unless given; how many
  are accepted and refused, how fast each kind of answer comes (p50, p99), and whether the
  refusals carry `google.rpc.RetryInfo` (when to come back) in their status details.
- slow reader: one seat joins over `Connect` and then reads nothing while a teammate makes many
  calls in the same session (each pushed to the silent seat); the server's resident memory
  before and after, and whether the server cut the stalled seat off (its stream's end status).

Neither assumes what the server does: both report what they saw. The server's memory is known
only for a server the load test started itself (its pid); with --target it is reported as such.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import struct_pb2

from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

from ..agents.errors import from_rpc_error
from ..service.process import start_serve, stop_child
from .connection import Connection
from .interrupt import Interrupt

SCENARIO = "meta-sre/payment-bad-deploy-v2"


def rss_mb(pid: int) -> float:
    """Resident memory of a process, in MiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def percentiles(ms: Sequence[float]) -> dict[str, float | None]:
    """p50 and p99 in milliseconds (None with no sample)."""
    if not ms:
        return {"p50": None, "p99": None}
    xs = sorted(ms)
    return {
        "p50": round(statistics.median(xs), 1),
        "p99": round(xs[min(len(xs) - 1, int(0.99 * len(xs)))], 1),
    }


@dataclass
class Server:
    """The server under load: its address, and its pid when the load test started it."""

    address: str
    pid: int | None
    channel: grpc.aio.Channel
    metadata: tuple[tuple[str, str], ...]


@contextlib.asynccontextmanager
async def server_under_load(
    connection: Connection, interrupt: Interrupt, *serve_args: str
) -> AsyncIterator[Server]:
    """`connection`'s target, or a `metasre serve` child started with `serve_args`."""
    token = connection.admin_token
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    if connection.target:
        credentials = connection.credentials()
        channel = (
            grpc.aio.secure_channel(connection.target, credentials, connection.options())
            if credentials is not None
            else grpc.aio.insecure_channel(connection.target)
        )
        async with channel:
            yield Server(connection.target, None, channel, metadata)
        return
    with (
        tempfile.TemporaryDirectory(prefix="loadtest-") as work,
        Path(work, "server.log").open("w") as log,
    ):
        try:
            # A session of its own: the terminal's Ctrl-C reaches the load test, which then
            # stops its server in order, not both at once.
            proc, address = await start_serve(
                "--port", "0", "--no-store", *serve_args, stderr=log, new_session=True
            )
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}: {Path(work, 'server.log').read_text()[-2000:]}") from None
        interrupt.kill_at_once(proc.pid)
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                yield Server(address, proc.pid, channel, metadata)
        finally:
            await stop_child(proc)
            interrupt.forget(proc.pid)


@dataclass
class OverloadReport:
    """What N concurrent CreateSessions got."""

    cap: int | None
    """The server's session cap (GetServerInfo), when it publishes one."""
    sessions: int
    accepted: int = 0
    refused: int = 0
    refused_with_retry_info: int = 0
    refusal_codes: dict[str, int] = field(default_factory=dict)
    """Status code and ErrorInfo reason of each kind of refusal, counted."""
    accepted_ms: dict[str, float | None] = field(default_factory=dict)
    refused_ms: dict[str, float | None] = field(default_factory=dict)
    retry_delays_s: list[float] = field(default_factory=list)
    interrupted: bool = False

    def render(self) -> str:
        """A human summary."""
        cap = self.cap if self.cap else "not published"
        with_info = (
            f"{self.refused_with_retry_info} of {self.refused}" if self.refused else "no refusals"
        )
        delays = sorted(set(self.retry_delays_s))
        return "\n".join(
            [
                f"overload: {self.sessions} concurrent CreateSessions, server cap {cap}",
                f"accepted {self.accepted}, refused {self.refused} {self.refusal_codes}",
                f"latency ms (client side, sent to answered): accepted p50 "
                f"{self.accepted_ms['p50']} p99 "
                f"{self.accepted_ms['p99']}; refused p50 {self.refused_ms['p50']} p99 "
                f"{self.refused_ms['p99']}",
                f"refusals carrying google.rpc.RetryInfo: {with_info}"
                + (f" (retry after {delays[:5]} s)" if delays else ""),
            ]
            + (["interrupted: the figures cover the calls answered"] if self.interrupted else [])
        )


def _reason(exc: grpc.aio.AioRpcError) -> str:
    """The code and ErrorInfo reason of a refusal, as the SDK reads its status details."""
    error = from_rpc_error(exc)
    return f"{error.code} {error.reason}".strip()


async def overload(
    connection: Connection, interrupt: Interrupt, sessions: int | None, cap: int
) -> OverloadReport:
    """Fire the CreateSessions at once; close what was accepted."""
    async with server_under_load(connection, interrupt, "--max-sessions", str(cap)) as server:
        control: Any = control_pb2_grpc.ControlServiceStub(server.channel)  # type: ignore[no-untyped-call]
        info = await control.GetServerInfo(
            control_pb2.GetServerInfoRequest(), metadata=server.metadata, timeout=30
        )
        published = int(info.limits.max_sessions) or None
        n = sessions or 2 * (published or cap)
        report = OverloadReport(published, n)
        owner = secrets.token_urlsafe(24)
        accepted: list[str] = []
        ok_ms: list[float] = []
        no_ms: list[float] = []

        async def create(i: int) -> None:
            request = control_pb2.CreateSessionRequest(
                scenario_id=SCENARIO,
                seed=i,
                seats=[common_pb2.SeatConfig(agent_id="a")],
                owner_token=owner,
            )
            started = time.perf_counter()
            try:
                reply = await control.CreateSession(request, metadata=server.metadata, timeout=60)
            except grpc.aio.AioRpcError as exc:
                no_ms.append((time.perf_counter() - started) * 1000)
                report.refused += 1
                kind, delay = _reason(exc), from_rpc_error(exc).retry_delay
                report.refusal_codes[kind] = report.refusal_codes.get(kind, 0) + 1
                if delay is not None:
                    report.refused_with_retry_info += 1
                    report.retry_delays_s.append(delay)
                return
            ok_ms.append((time.perf_counter() - started) * 1000)
            report.accepted += 1
            accepted.append(reply.session.session_id)

        tasks = [asyncio.ensure_future(create(i)) for i in range(n)]
        stop = asyncio.ensure_future(_until_interrupted(interrupt))
        done: asyncio.Future[Any] = asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.wait([done, stop], return_when=asyncio.FIRST_COMPLETED)
        if stop.done():
            report.interrupted = True
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        stop.cancel()
        # The admin token when there is one, else the owner credential the sessions were made
        # with.
        close_md = server.metadata or (("authorization", f"Bearer {owner}"),)
        await asyncio.gather(
            *(
                control.CloseSession(
                    control_pb2.CloseSessionRequest(session_id=sid), metadata=close_md, timeout=30
                )
                for sid in accepted
            ),
            return_exceptions=True,
        )
        report.accepted_ms = percentiles(ok_ms)
        report.refused_ms = percentiles(no_ms)
        return report


async def _until_interrupted(interrupt: Interrupt) -> None:
    """Return at the first Ctrl-C (the handler runs outside the loop: it wakes it)."""
    loop = asyncio.get_running_loop()
    came = asyncio.Event()
    interrupt.on_interrupt(lambda: loop.call_soon_threadsafe(came.set))
    await came.wait()


@dataclass
class SlowReaderReport:
    """What a silent seat did to the server while its teammate worked."""

    calls: int
    calls_made: int = 0
    """The teammate's calls the server applied."""
    episodes: int = 1
    """Episodes the calls spanned: the session is reset whenever the step budget runs out."""
    refused: int = 0
    refusals: dict[str, int] = field(default_factory=dict)
    pushes_read: int = 0
    """Messages the silent seat read once it woke up, before its stream ended or went quiet."""
    cut_off: bool | None = None
    """True: the server ended the silent seat's stream; False: it was still open."""
    cut_off_status: str = ""
    rss_before_mb: float | None = None
    rss_peak_mb: float | None = None
    rss_after_mb: float | None = None
    teammate_ms: dict[str, float | None] = field(default_factory=dict)
    interrupted: bool = False

    def render(self) -> str:
        """A human summary."""
        if self.rss_before_mb is None:
            memory = "server RSS: not measured (a --target server's memory is not visible here)"
        else:
            memory = (
                f"server RSS MB: before {self.rss_before_mb:.1f}, peak {self.rss_peak_mb:.1f}, "
                f"after {self.rss_after_mb:.1f} "
                f"({(self.rss_after_mb or 0) - self.rss_before_mb:+.1f})"
            )
        if self.cut_off is None:
            fate = "the stalled seat's fate: unknown (interrupted)"
        elif self.cut_off:
            fate = f"the stalled seat was cut off: {self.cut_off_status}"
        else:
            fate = "the stalled seat was NOT cut off: its stream was still open"
        return "\n".join(
            [
                f"slow reader: one seat joined and read nothing while its teammate made "
                f"{self.calls_made} of {self.calls} calls over {self.episodes} episodes"
                + (f" ({self.refused} refused: {self.refusals})" if self.refused else ""),
                f"teammate latency ms: p50 {self.teammate_ms.get('p50')} p99 "
                f"{self.teammate_ms.get('p99')}",
                memory,
                fate + f"; it then read {self.pushes_read} messages before its stream went "
                "quiet (2 s) or ended",
            ]
            + (["interrupted: the figures cover the calls made"] if self.interrupted else [])
        )


async def slow_reader(
    connection: Connection, interrupt: Interrupt, calls: int, idle_seconds: float
) -> SlowReaderReport:
    """Stall one seat, drive the other, measure, then see what became of the stalled one."""
    report = SlowReaderReport(calls)
    async with server_under_load(
        connection, interrupt, "--idle-seat-seconds", f"{idle_seconds:g}"
    ) as server:
        control: Any = control_pb2_grpc.ControlServiceStub(server.channel)  # type: ignore[no-untyped-call]
        agents: Any = agent_pb2_grpc.AgentServiceStub(server.channel)  # type: ignore[no-untyped-call]
        owner = secrets.token_urlsafe(24)
        created = await control.CreateSession(
            control_pb2.CreateSessionRequest(
                scenario_id=SCENARIO,
                seats=[
                    common_pb2.SeatConfig(agent_id="silent"),
                    common_pb2.SeatConfig(agent_id="busy"),
                ],
                owner_token=owner,
            ),
            metadata=server.metadata,
            timeout=30,
        )
        sid = created.session.session_id
        tokens = {t.agent_id: t.join_token for t in created.tokens}
        requests: asyncio.Queue[agent_pb2.ConnectRequest | None] = asyncio.Queue()
        await requests.put(
            agent_pb2.ConnectRequest(
                join=agent_pb2.JoinSeat(session_id=sid, join_token=tokens["silent"])
            )
        )

        async def outgoing() -> AsyncIterator[agent_pb2.ConnectRequest]:
            while (item := await requests.get()) is not None:
                yield item

        stream = agents.Connect(outgoing())
        joined = await asyncio.wait_for(stream.read(), 30)
        if not isinstance(joined, agent_pb2.ConnectResponse):  # the end of the stream
            raise RuntimeError("the silent seat's stream ended at once")
        if server.pid is not None:
            report.rss_before_mb = rss_mb(server.pid)
            report.rss_peak_mb = report.rss_before_mb
        latencies: list[float] = []
        args = struct_pb2.Struct()
        args.update({"service": "payment-service", "lines": 200})
        owner_md = server.metadata or (("authorization", f"Bearer {owner}"),)
        i = 0
        while report.calls_made < calls:
            if interrupt.requested:
                report.interrupted = True
                break
            i += 1
            started = time.perf_counter()
            try:
                await agents.CallTool(
                    agent_pb2.CallToolRequest(
                        session_id=sid,
                        token=tokens["busy"],
                        call=agent_pb2.ToolCall(call_id=f"c{i}", tool="read_logs", args=args),
                    ),
                    timeout=60,
                )
            except grpc.aio.AioRpcError as exc:
                reason = _reason(exc)
                if "EPISODE_OVER" not in reason:
                    report.refused += 1
                    report.refusals[reason] = report.refusals.get(reason, 0) + 1
                    if report.refused > calls:
                        break  # the server refuses everything: nothing to measure
                    continue
                # The step budget ran out: a new episode in the same session, the silent seat
                # still joined, so the teammate can go on.
                await control.ResetSession(
                    control_pb2.ResetSessionRequest(session_id=sid), metadata=owner_md, timeout=30
                )
                report.episodes += 1
                continue
            latencies.append((time.perf_counter() - started) * 1000)
            report.calls_made += 1
            if server.pid is not None and i % 20 == 0:
                report.rss_peak_mb = max(report.rss_peak_mb or 0.0, rss_mb(server.pid))
        report.teammate_ms = percentiles(latencies)
        if server.pid is not None:
            report.rss_after_mb = rss_mb(server.pid)
            report.rss_peak_mb = max(report.rss_peak_mb or 0.0, report.rss_after_mb)
        if not report.interrupted:
            # Wake up and read: the stream either ends with the server's verdict or stays
            # open with the queue behind it, drained until it goes quiet.
            report.cut_off = False
            while True:
                try:
                    message = await asyncio.wait_for(stream.read(), 2.0)
                except TimeoutError:
                    break
                except grpc.aio.AioRpcError as exc:
                    report.cut_off, report.cut_off_status = True, f"{_reason(exc)}: {exc.details()}"
                    break
                if not isinstance(message, agent_pb2.ConnectResponse):  # the end of the stream
                    code = await stream.code()
                    report.cut_off = True
                    report.cut_off_status = f"{code.name}: {await stream.details()}"
                    break
                report.pushes_read += 1
        await requests.put(None)
        stream.cancel()
        with contextlib.suppress(grpc.aio.AioRpcError):
            await control.CloseSession(
                control_pb2.CloseSessionRequest(session_id=sid),
                metadata=owner_md,
                timeout=30,
            )
    return report


def as_dict(report: OverloadReport | SlowReaderReport) -> dict[str, Any]:
    """Plain data for --json."""
    return asdict(report)
