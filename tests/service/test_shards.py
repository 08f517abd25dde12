"""`metasre serve --workers 2`: shards behind a directory, through real processes and clients.

Every test runs the real command (a supervisor, two shard processes, the directory) and talks
to it with the SDK or raw gRPC stubs: where sessions land, the refusal naming the holder, the
owner's quota and request ids over the fleet, the fleet's status, and a shard killed mid-episode
that comes back with its sessions and grades as an uninterrupted run does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from metasre.agents.client import MetasreClient
from metasre.agents.sync import SyncClient
from metasre.cli.main import main
from metasre.simulator import Episode
from metasre.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    control_pb2,
    control_pb2_grpc,
    watch_pb2,
    watch_pb2_grpc,
)

from .conftest import AD, TIMEOUT
from .serve_process import ServeProcess, metasre_serve

SEED = 3


def _error_info(exc: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    for key, value in exc.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info
    raise AssertionError(f"no ErrorInfo in {exc!r}")


def _shard_pids(supervisor: int) -> list[int]:
    """The supervisor's children (its shards), from /proc."""
    pids: list[int] = []
    for task in Path(f"/proc/{supervisor}/task").iterdir():
        pids += [int(p) for p in (task / "children").read_text().split()]
    return pids


def _shard_of(pids: list[int], port: str) -> int:
    """The pid of the shard serving on `port` (its command line names it)."""
    for pid in pids:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if port.encode() in argv:
            return pid
    raise AssertionError(f"no shard on port {port} among {pids}")


@contextlib.asynccontextmanager
async def fleet(
    tmp_path: Path, *args: str, store: Path | str | None = None
) -> AsyncIterator[ServeProcess]:
    """A fleet of two on `store` (a SQLite path, each shard a file of its own beside it; or a
    PostgreSQL URL the shards share)."""
    where = str(store if store is not None else tmp_path / "fleet.db")
    async with metasre_serve("--workers", "2", "--store", where, *args) as served:
        yield served


async def _served_again(endpoint: str) -> None:
    """Until the shard at `endpoint` answers its health check again (a new process)."""
    async with grpc.aio.insecure_channel(endpoint) as channel:
        for _ in range(3):
            try:
                # waits for a process to listen; the first try may still meet the dying one
                await health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), wait_for_ready=True, timeout=TIMEOUT * 3
                )
                return
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
    raise AssertionError(f"the shard at {endpoint} did not come back")


def _solution() -> list[tuple[str, dict[str, Any]]]:
    steps = Episode.make(AD, SEED).instance.spec.solution
    return [(s.tool, dict(s.args)) for s in steps]


def _graded(grade: dict[str, Any]) -> tuple[Any, ...]:
    return (
        grade["total"],
        grade.get("resolved", False),
        sorted(grade.get("fail_to_pass", {}).items()),
        sorted(grade.get("pass_to_pass", {}).items()),
    )


async def _play(client: MetasreClient, steps: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    session = await client.create_session(AD, seed=SEED)
    async with client.agent(session.id, session.tokens["agent"]) as agent:
        for tool, args in steps:
            await agent.call(tool, args)
    return await client.get_grade(session.id)


async def test_sessions_spread_over_shards_and_the_sdk_follows_them(tmp_path: Path) -> None:
    async with fleet(tmp_path) as served, MetasreClient(served.address) as client:
        info = await client.server_info()
        endpoints = [s["endpoint"] for s in info["shards"]]
        assert len(endpoints) == 2 and all(s["serving"] for s in info["shards"])
        assert served.address not in endpoints

        handles = [await client.create_session(AD, seed=SEED) for _ in range(6)]
        by_shard = {h.endpoint for h in handles}
        assert by_shard == set(endpoints), "request ids hash over both shards"
        for h in handles:
            slot = int(h.id.rsplit("-s", 1)[1])
            assert h.endpoint == endpoints[slot]

        # a whole episode through the directory's address: the SDK went to the shard
        grade = await _play(client, _solution())
        assert grade["grade"]["resolved"]

        # the directory lists the owner's sessions of both shards, and forwards session calls
        listed = {s["session_id"] for s in await client.list_sessions()}
        assert {h.id for h in handles} <= listed
        async with MetasreClient(served.address, owner_token=client.owner_token) as plain:
            session = await plain.get_session(handles[0].id)  # the directory forwards it
            assert session["endpoint"] == handles[0].endpoint

        # a shard asked for the other's session answers NOT_FOUND naming the holder
        h = handles[0]
        other = next(e for e in endpoints if e != h.endpoint)
        metadata = (("authorization", f"Bearer {client.owner_token}"),)
        async with grpc.aio.insecure_channel(other) as channel:
            stub = control_pb2_grpc.ControlServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.GetSession(
                    control_pb2.GetSessionRequest(session_id=h.id), metadata=metadata
                )
        assert refused.value.code() == grpc.StatusCode.NOT_FOUND
        found = _error_info(refused.value)
        assert found.reason == "SESSION_ON_OTHER_SHARD"
        assert found.metadata["owner_endpoint"] == h.endpoint

        # a Connect stream on the directory is sent to the shard the same way
        async with grpc.aio.insecure_channel(served.address) as channel:
            agents = agent_pb2_grpc.AgentServiceStub(channel)
            first = agent_pb2.ConnectRequest(
                join=agent_pb2.JoinSeat(session_id=h.id, join_token=h.tokens["agent"])
            )

            async def requests() -> AsyncIterator[agent_pb2.ConnectRequest]:
                yield first

            with pytest.raises(grpc.aio.AioRpcError) as redirected:
                async for _ in agents.Connect(requests()):
                    pass
        assert redirected.value.code() == grpc.StatusCode.NOT_FOUND
        assert _error_info(redirected.value).metadata["owner_endpoint"] == h.endpoint

        # and an id no shard makes is refused by the directory itself
        with pytest.raises(Exception, match="SESSION_NOT_FOUND"):
            await client.get_grade("0123456789abcdef")
        assert await served.stop() == 0


async def test_owner_quota_and_request_ids_hold_across_the_fleet(tmp_path: Path) -> None:
    owner = "fleet-quota-owner-token-000000001"
    async with fleet(tmp_path, "--max-sessions-per-owner", "2") as served:
        async with grpc.aio.insecure_channel(served.address) as channel:
            stub = control_pb2_grpc.ControlServiceStub(channel)

            def create(request_id: str = "") -> Any:
                return stub.CreateSession(
                    control_pb2.CreateSessionRequest(
                        scenario_id=AD, seed=SEED, owner_token=owner, request_id=request_id
                    )
                )

            # without request ids the directory goes round the shards: one session on each
            made = [await create(), await create()]
            assert {m.session.endpoint for m in made} == {
                s.endpoint
                for s in (await stub.GetServerInfo(control_pb2.GetServerInfoRequest())).shards
            }
            # each shard holds one, under its own quota of 2: the fleet's quota refuses a third
            for _ in range(2):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await create()
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                info = _error_info(refused.value)
                assert info.reason == "OWNER_AT_QUOTA"
                assert info.metadata["owner_sessions"] == "2"

            # a request id's retries meet the same shard, which answers with the same session
            metadata = (("authorization", f"Bearer {owner}"),)
            await stub.CloseSession(
                control_pb2.CloseSessionRequest(session_id=made[0].session.session_id),
                metadata=metadata,
            )
            first = await create("retry-me-0001")
            again = await create("retry-me-0001")
            assert again.session.session_id == first.session.session_id
            assert list(again.tokens) == list(first.tokens)

            # another owner sees none of these sessions, on any shard
            stranger = (("authorization", "Bearer someone-else-token-0000000001"),)
            listed = await stub.ListSessions(control_pb2.ListSessionsRequest(), metadata=stranger)
            assert list(listed.sessions) == []
        assert await served.stop() == 0


async def test_a_killed_shard_comes_back_with_its_sessions_and_the_same_grade(
    tmp_path: Path, store_where: Path | str, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = _solution()
    async with (
        fleet(tmp_path, store=store_where) as served,
        MetasreClient(served.address) as client,
    ):
        uninterrupted = await _play(client, steps)

        session = await client.create_session(AD, seed=SEED)
        agent = client.agent(session.id, session.tokens["agent"])
        await agent.join()
        half = len(steps) // 2
        for tool, args in steps[:half]:
            await agent.call(tool, args)

        pid = _shard_of(_shard_pids(served.proc.pid), session.endpoint.rsplit(":", 1)[1])
        os.kill(pid, signal.SIGKILL)
        # the supervisor starts the slot again; it rebuilds the session from its store
        await _served_again(session.endpoint)
        await agent.join(resume=True)
        for tool, args in steps[half:]:
            await agent.call(tool, args)
        resumed = await client.get_grade(session.id)
        await agent.close()
        assert _graded(resumed["grade"]) == _graded(uninterrupted["grade"])

        info = await client.server_info()
        slot = int(session.id.rsplit("-s", 1)[1])
        assert info["shards"][slot]["restarts"] == 1
        # the restarted shard rebuilt its own slot's session only, not the other's (PostgreSQL:
        # one database holds both shards' sessions)
        assert sum(s["load"]["open_sessions"] for s in info["shards"]) == 2

        # `metasre fleet status` shows the same
        capsys.readouterr()
        code = await asyncio.to_thread(
            main, ["fleet", "status", "--target", served.address, "--json"]
        )
        rows = json.loads(capsys.readouterr().out)["shards"]
        assert code == 0
        assert [r["restarts"] for r in rows][slot] == 1
        assert all(r["serving"] for r in rows)
        assert await served.stop() == 0


async def test_the_sync_client_plays_a_fleets_session_from_a_thread_of_its_own(
    tmp_path: Path,
) -> None:
    """SyncClient through the directory, from a thread that has no event loop (a rollout's
    worker thread): the seat's channel to its shard is made on the client's own loop."""
    steps = _solution()

    def play(address: str) -> dict[str, Any]:
        with SyncClient(address) as client:
            session = client.create_session(AD, seed=SEED)
            assert session.endpoint and session.endpoint != address
            agent = client.agent(session.id, session.tokens["agent"])
            try:
                for tool, args in steps:
                    agent.call(tool, args)
            finally:
                agent.close()
            return client.get_grade(session.id)

    async with fleet(tmp_path) as served:
        grade = await asyncio.to_thread(play, served.address)
        assert grade["grade"]["final"] and grade["grade"]["resolved"]
        assert await served.stop() == 0


async def test_a_stranger_gets_the_same_answer_for_a_foreign_session_as_for_none(
    tmp_path: Path,
) -> None:
    """Through the directory and a shard, another owner's token probing a real session id and
    a made-up one of the same shape (the same shard) gets the same refusal, word for word, and
    at once: no existence oracle. Without any token, the same again (TOKEN_MISSING for both)."""
    async with (
        fleet(tmp_path) as served,
        MetasreClient(served.address) as owner,
        grpc.aio.insecure_channel(served.address) as channel,
    ):
        real = await owner.create_session(AD, seed=SEED)
        made_up = "0123456789abcdef-s" + real.id.rsplit("-s", 1)[1]
        control = control_pb2_grpc.ControlServiceStub(channel)
        stranger = (("authorization", "Bearer a-stranger-owner-token-00000001"),)
        calls = {
            "GetSession": control_pb2.GetSessionRequest,
            "GetGrade": control_pb2.GetGradeRequest,
            "CloseSession": control_pb2.CloseSessionRequest,
            "GetTrajectory": control_pb2.GetTrajectoryRequest,
        }

        async def refusal(method: str, session_id: str, metadata: Any) -> tuple[Any, ...]:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await getattr(control, method)(
                    calls[method](session_id=session_id), metadata=metadata, timeout=TIMEOUT
                )
            info = _error_info(refused.value)
            return (
                refused.value.code(),
                info.reason,
                dict(info.metadata),
                (refused.value.details() or "").replace(session_id, "<id>"),
            )

        for method in calls:
            for metadata in (stranger, ()):
                foreign = await refusal(method, real.id, metadata)
                assert foreign == await refusal(method, made_up, metadata), method
                assert foreign[1] == ("SESSION_NOT_FOUND" if metadata else "TOKEN_MISSING")
        watch = watch_pb2_grpc.WatchServiceStub(channel)
        answers = []
        for session_id in (real.id, made_up):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                async for _ in watch.WatchSession(
                    watch_pb2.WatchSessionRequest(session_id=session_id),
                    metadata=stranger,
                    timeout=TIMEOUT,
                ):
                    pass
            answers.append((refused.value.code(), _error_info(refused.value).reason))
        assert answers == [(grpc.StatusCode.NOT_FOUND, "SESSION_NOT_FOUND")] * 2
        # the stranger's CloseSession closed nothing: the owner's session is still open
        assert not (await owner.get_session(real.id)).get("closed", False)
        assert await served.stop() == 0


async def test_a_shard_killed_during_a_rollout_costs_no_episode_its_grade(
    postgres_cluster: Any,
) -> None:
    """Issue 32's done-when, over PostgreSQL: one of three shards is SIGKILLed while six
    episodes are halfway, and every episode ends with the grade an uninterrupted run gives. The
    caller does nothing about it: no resume, no re-dial, no retry of its own. The SDK waits for
    the slot's new process, asks the directory where each session lives, resumes the seats and
    sends the calls that were cut off again under their call ids."""
    steps = _solution()
    half = len(steps) // 2
    store = str(postgres_cluster.new_database())
    async with (
        metasre_serve("--workers", "3", "--store", store) as served,
        MetasreClient(served.address) as client,
    ):
        uninterrupted = _graded((await _play(client, steps))["grade"])
        # two episodes on every shard (a create's request id picks its shard by hash)
        sessions: list[Any] = []
        for _ in range(60):
            made = await client.create_session(AD, seed=SEED)
            if sum(s.endpoint == made.endpoint for s in sessions) < 2:
                sessions.append(made)
            else:
                await client.close_session(made.id)
            if len(sessions) == 6:
                break
        assert len(sessions) == 6 and len({s.endpoint for s in sessions}) == 3
        agents = [client.agent(s.id, s.tokens["agent"]) for s in sessions]

        async def play(agent: Any, part: list[tuple[str, dict[str, Any]]]) -> None:
            for tool, args in part:
                await agent.call(tool, args)

        for agent in agents:
            await agent.join()
        await asyncio.gather(*(play(a, steps[:half]) for a in agents))

        victim = sessions[0]
        os.kill(
            _shard_of(_shard_pids(served.proc.pid), victim.endpoint.rsplit(":", 1)[1]),
            signal.SIGKILL,
        )
        # a control call on a session of the dead shard waits for the slot's new process
        assert (await client.get_session(victim.id))["episode"] == 1
        await asyncio.gather(*(play(a, steps[half:]) for a in agents))
        for session, agent in zip(sessions, agents, strict=True):
            grade = (await client.get_grade(session.id))["grade"]
            assert grade["final"]
            assert _graded(grade) == uninterrupted, session.endpoint
            await agent.close()

        info = await client.server_info()
        slot = int(victim.id.rsplit("-s", 1)[1])
        assert [s.get("restarts", 0) for s in info["shards"]] == [
            1 if i == slot else 0 for i in range(3)
        ]
        assert await served.stop() == 0


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--workers", "0"], "--workers takes a count of shard processes, 1-256, or 'auto'"),
        (["--workers", "many"], "got 'many'"),
        (["--workers", "2", "--tls-cert", "c.pem", "--tls-key", "k.pem"], "without TLS"),
        (["--workers", "2", "--port", "65535"], "past 65535: pick a lower --port"),
    ],
    ids=["zero", "not-a-count", "tls", "ports-past-the-end"],
)
def test_workers_refuses_what_cannot_work(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with contextlib.suppress(SystemExit):  # argparse's own refusals exit 2
        code = main(["serve", "--no-store", *args])
        assert code == 2
    assert said in capsys.readouterr().err
