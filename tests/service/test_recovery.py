"""Crash recovery: `metasre serve` killed with SIGKILL mid-session, restarted on the same store.

The same scripted play runs twice, on two real `metasre serve --store` processes: once straight
through, once with a SIGKILL in the middle (one call still in flight) and a restart on the same
store and port. Four sessions cover the turn policies, the attribution modes, a session in its
second episode, test runs and edits. After the restart the agents re-attach with the resume
tokens they got before the crash (one seat joins for the first time, one re-joins with its join
token), retry the call that was in flight under the same call_id, and play on.

Then: every session's stored log (every event, sequence, payload) and grade are identical to the
uninterrupted run's; nothing acknowledged before the kill is lost and nothing is applied twice;
each agent heard every call of its episode exactly once across the two server lives; the
sessions were rebuilt before the server served; no token is in the store or the logs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from metasre.agents.client import AgentConnection, MetasreClient
from metasre.agents.errors import ClientError
from metasre.conformance.validate import play_steps
from metasre.service.store.sqlite import TrajectoryStore
from metasre.simulator import Episode, resolve
from metasre.v1 import control_pb2, control_pb2_grpc

from .conftest import AD, PAY, TIMEOUT
from .serve_process import ServeProcess, metasre_serve

# Under `pytest -n`: its module fixture plays two runs, one with a crash: once, on one worker.
pytestmark = pytest.mark.xdist_group("recovery")

OOM = "meta-sre/user-service-oom-v2"
FAST_RECONNECT = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 500),
)


def solution(scenario: str, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """The reference fix as concrete calls (edits located by line)."""
    steps = resolve(scenario).instance(seed).spec.solution
    return play_steps(Episode.make(scenario, seed), steps)


@dataclass
class Table:
    """Sessions by name: their ids, join tokens, agent connections and what they heard."""

    client: MetasreClient
    control: control_pb2_grpc.ControlServiceStub
    ids: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, dict[str, str]] = field(default_factory=dict)
    agents: dict[tuple[str, str], AgentConnection] = field(default_factory=dict)
    ticks: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=dict)
    """(episode, tick) of every call an agent heard of: its own results and the others'."""
    acked: dict[str, list[str]] = field(default_factory=dict)
    """Per session, call ids the server answered with a result."""
    resume_tokens: dict[tuple[str, str], str] = field(default_factory=dict)
    episodes: dict[str, int] = field(default_factory=dict)
    grades: dict[str, dict[str, Any]] = field(default_factory=dict)

    async def create(self, name: str, scenario: str, seats: list[str], **kw: Any) -> None:
        handle = await self.client.create_session(scenario, seats=seats, **kw)
        self.ids[name], self.tokens[name] = handle.id, dict(handle.tokens)
        self.acked[name] = []

    async def join(self, name: str, agent: str) -> AgentConnection:
        conn = self.client.agent(self.ids[name], self.tokens[name][agent])
        joined = await conn.join()
        self.agents[name, agent] = conn
        self.ticks[name, agent] = []
        self.resume_tokens[name, agent] = joined["resume_token"]
        return conn

    async def call(
        self, name: str, agent: str, tool: str, args: dict[str, Any], call_id: str = ""
    ) -> None:
        conn = self.agents[name, agent]
        call_id = call_id or f"{agent}-{len(self.acked[name]) + 1}"  # the same in both runs
        result = await conn.call(tool, args, call_id=call_id)
        self.acked[name].append(result.call_id)
        self.ticks[name, agent].append((self.episode(name), result.tick))

    def episode(self, name: str) -> int:
        return self.episodes.get(name, 1)

    def heard(self, name: str, agent: str) -> list[tuple[int, int]]:
        conn = self.agents[name, agent]
        return sorted(
            self.ticks[name, agent] + [(self.episode(name), a["tick"]) for a in conn.inbox.applied]
        )


async def phase_one(t: Table) -> None:
    """Everything before the crash."""
    # 1. FREE_FOR_ALL, MIXED: three seats; c never joins before the crash.
    await t.create("ffa", PAY, ["a", "b", "c"], attribution="MIXED", team_spirit=0.5)
    await t.join("ffa", "a")
    await t.join("ffa", "b")
    await t.call("ffa", "a", "get_alerts", {})
    await t.call("ffa", "b", "read_logs", {"service": "payment-service", "level": "ERROR"})
    await t.call("ffa", "a", "run_tests", {"suite": "unit"})
    await t.call("ffa", "b", "send_message", {"text": "v2.4.2 crash-loops", "to": ["a"]})
    await t.call("ffa", "a", "view_file", {"path": "payment_service/handlers.py"})
    # 2. SIMULTANEOUS rounds, DIFFERENCE rewards.
    await t.create("sim", OOM, ["x", "y"], turn_policy="SIMULTANEOUS", attribution="DIFFERENCE")
    await t.join("sim", "x")
    await t.join("sim", "y")
    await asyncio.gather(
        t.call("sim", "x", "get_alerts", {}),
        t.call("sim", "y", "describe_service", {"service": "user-service"}),
    )
    # 3. ROUND_ROBIN, INDIVIDUAL.
    await t.create(
        "rr", PAY, ["p", "q"], seed=1, turn_policy="ROUND_ROBIN", attribution="INDIVIDUAL"
    )
    await t.join("rr", "p")
    await t.join("rr", "q")
    await t.call("rr", "p", "get_alerts", {})
    await t.call("rr", "q", "check_dependencies", {})
    await t.call("rr", "p", "git_log", {"path": "payment_service"})
    # 4. An episode solved, the session reset, the second episode begun.
    await t.create("reset", AD, ["solo"])
    await t.join("reset", "solo")
    for tool, args in solution(AD, 0):
        await t.call("reset", "solo", tool, args)
    await t.control.ResetSession(
        control_pb2.ResetSessionRequest(session_id=t.ids["reset"], seed=2),
        timeout=TIMEOUT,
        metadata=(("authorization", f"Bearer {t.client.owner_token}"),),
    )
    t.episodes["reset"] = 2
    await t.call("reset", "solo", "get_alerts", {})
    await t.call("reset", "solo", "run_tests", {"suite": "unit"})


def in_flight(t: Table) -> Callable[[], Awaitable[None]]:
    """A call sent and not awaited (the kill comes while it is in flight, or just after); the
    retry to make after the restart."""
    inflight = asyncio.ensure_future(
        t.call("ffa", "a", "read_logs", {"service": "api-gateway"}, call_id="in-flight")
    )

    async def retry() -> None:
        with contextlib.suppress(ClientError):
            await inflight  # lost with the connection, or answered just before the kill
        if "in-flight" not in t.acked["ffa"]:
            await t.call("ffa", "a", "read_logs", {"service": "api-gateway"}, call_id="in-flight")

    return retry


async def phase_two(t: Table, retry: Callable[[], Awaitable[None]] | None) -> None:
    """Everything after the crash (straight on, in the uninterrupted run)."""
    if retry is not None:
        await retry()
    else:
        await t.call("ffa", "a", "read_logs", {"service": "api-gateway"}, call_id="in-flight")
    await t.join("ffa", "c")  # first join, after the restart
    await t.call("ffa", "c", "check_dependencies", {})
    rollback, report = solution(PAY, 0)
    await t.call("ffa", "a", *rollback)
    await t.call("ffa", "b", *report)

    scale, oom_report = solution(OOM, 0)
    await asyncio.gather(
        t.call("sim", "x", *scale), t.call("sim", "y", "read_logs", {"service": "user-service"})
    )
    refused = asyncio.ensure_future(t.call("sim", "y", "get_alerts", {}))
    await t.call("sim", "x", *oom_report)
    with pytest.raises(ClientError, match="EPISODE_OVER"):  # x's report ended the episode first
        await refused

    rollback, report = solution(PAY, 1)
    await t.call("rr", "q", "get_alerts", {})
    await t.call("rr", "p", *rollback)
    await t.call("rr", "q", *report)

    for tool, args in solution(AD, 2):
        await t.call("reset", "solo", tool, args)


async def resume(conn: AgentConnection) -> None:
    """Re-attach with the resume token, retrying while the server comes back."""
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        try:
            await conn.join(resume=True)
            return
        except ClientError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.1)


def serve(db: Path, port: int = 0) -> contextlib.AbstractAsyncContextManager[ServeProcess]:
    return metasre_serve("--store", str(db), "--turn-timeout-seconds", "60", port=port)


async def play(tmp: Path, *, crash: bool) -> tuple[Table, list[ServeProcess], Path]:
    db = tmp / "store.db"
    servers: list[ServeProcess] = []
    async with contextlib.AsyncExitStack() as stack:
        server = await stack.enter_async_context(serve(db))
        servers.append(server)
        client = await stack.enter_async_context(
            MetasreClient(server.address, options=FAST_RECONNECT)
        )
        channel = await stack.enter_async_context(grpc.aio.insecure_channel(server.address))
        t = Table(client, control_pb2_grpc.ControlServiceStub(channel))
        await phase_one(t)
        if crash:
            retry = in_flight(t)
            await asyncio.sleep(0.01)  # the in-flight call reaches the server
            before = {name: list(ids) for name, ids in t.acked.items()}
            server.proc.send_signal(signal.SIGKILL)
            await server.proc.wait()
            port = int(server.address.rpartition(":")[2])
            restarted = await stack.enter_async_context(serve(db, port))
            servers.append(restarted)
            # Nothing acknowledged before the kill was lost.
            store = TrajectoryStore(db)
            try:
                for name, sid in t.ids.items():
                    stored = [
                        e.payload["call_id"] for e in store.events(sid) if e.kind == "applied"
                    ]
                    assert set(before[name]) <= set(stored)
            finally:
                store.close()
            for (name, agent), conn in list(t.agents.items()):
                if (name, agent) == ("ffa", "b"):
                    # b comes back with its join token: the seat is free, the token still
                    # opens it, and it is given the same resume token as before the crash.
                    again = t.client.agent(t.ids[name], t.tokens[name][agent])
                    joined = await again.join()
                    assert joined["resume_token"] == t.resume_tokens[name, agent]
                    await conn.close()
                    t.agents[name, agent] = again
                    t.ticks[name, agent] = []  # a join replays the episode from its start
                else:
                    await resume(conn)
            await phase_two(t, retry)
        else:
            await phase_two(t, None)
        t.grades = {name: await t.client.get_grade(sid) for name, sid in t.ids.items()}
        for conn in t.agents.values():
            await conn.close()
        for s in servers:
            if s.proc.returncode is None:
                s.proc.send_signal(signal.SIGTERM)
                await asyncio.wait_for(s.proc.wait(), TIMEOUT)
    return t, servers, db


def stored_log(db: Path, session_id: str) -> list[tuple[Any, ...]]:
    store = TrajectoryStore(db)
    try:
        return [
            (
                e.sequence,
                e.episode,
                e.tick,
                e.kind,
                e.agent_id,
                json.dumps(e.payload, sort_keys=True),
            )
            for e in store.events(session_id)
        ]
    finally:
        store.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    async def both() -> tuple[Any, Any]:
        straight = await play(tmp_path_factory.mktemp("straight"), crash=False)
        crashed = await play(tmp_path_factory.mktemp("crashed"), crash=True)
        return straight, crashed

    return asyncio.run(both())


def test_the_restarted_episodes_log_and_grade_equal_an_uninterrupted_run(runs):
    (straight, _, straight_db), (crashed, _, crashed_db) = runs
    for name in straight.ids:
        expected = stored_log(straight_db, straight.ids[name])
        got = stored_log(crashed_db, crashed.ids[name])
        assert [row[3] for row in got].count("ended") == (2 if name == "reset" else 1)
        assert got == expected, name
        assert crashed.grades[name] == straight.grades[name], name
        assert crashed.grades[name]["grade"]["final"] is True
    assert crashed.grades["ffa"]["grade"]["resolved"] is True


def test_nothing_is_applied_twice_and_every_agent_heard_every_call_once(runs):
    (straight, _, _), (crashed, _, crashed_db) = runs
    store = TrajectoryStore(crashed_db)
    try:
        for name, sid in crashed.ids.items():
            ids = [e.payload["call_id"] for e in store.events(sid) if e.kind == "applied"]
            assert len(ids) == len(set(ids)), name
            assert ids.count("in-flight") == (1 if name == "ffa" else 0)
    finally:
        store.close()
    for key in [("ffa", "a"), ("ffa", "c"), ("sim", "x"), ("rr", "p"), ("reset", "solo")]:
        heard = crashed.heard(*key)
        assert len(heard) == len(set(heard)), key
        assert heard == straight.heard(*key), key


def test_sessions_are_rebuilt_before_the_server_serves_and_no_token_is_kept(runs):
    _, (crashed, servers, crashed_db) = runs
    events = servers[0].events() + servers[1].events()  # the server's two lives
    serving = [i for i, e in enumerate(events) if e["event"] == "serving"]
    recovered = [i for i, e in enumerate(events) if e["event"] == "session_recovered"]
    assert len(serving) == 2
    assert {events[i]["session_id"] for i in recovered} == set(crashed.ids.values())
    assert all(serving[0] < i < serving[1] for i in recovered)
    secrets = [tok for seats in crashed.tokens.values() for tok in seats.values()]
    secrets += list(crashed.resume_tokens.values())
    log_text = servers[0].log_text + servers[1].log_text
    stored = b"".join(p.read_bytes() for p in crashed_db.parent.glob(crashed_db.name + "*"))
    for secret in secrets:
        assert secret not in log_text
        assert secret.encode() not in stored
