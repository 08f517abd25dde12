"""The server's structlog output: JSON lines bound to session, agent and tick; never a token.

One real `metasre -v serve` (debug level, admin token set) plays a session that uses every kind
of secret: the admin token (right and wrong), join tokens (right, wrong, stolen), resume tokens
(right and wrong), CallTool with a token, a watcher. Its whole stderr is then searched.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
import structlog

from metasre.service.core import auth
from metasre.service.wire.status import status_of
from metasre.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    control_pb2,
    control_pb2_grpc,
    watch_pb2,
    watch_pb2_grpc,
)

from .conftest import TIMEOUT, AgentClient, create, details, pay_solution, struct
from .serve_process import metasre_serve

# Under `pytest -n`: its module fixture serves one whole session: once, on one worker.
pytestmark = pytest.mark.xdist_group("logging")


@dataclass
class Played:
    """What the scenario did and what the server logged meanwhile."""

    session_id: str = ""
    secrets: dict[str, str] = field(default_factory=dict)
    applied: list[tuple[str, int, str]] = field(default_factory=list)
    """(agent, tick, tool) of every applied call, from the clients' results."""
    log_text: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    exit_code: int | None = None


async def play() -> Played:
    out = Played()
    admin = out.secrets["admin"] = auth.new_token()
    out.secrets["wrong admin"] = auth.new_token()
    out.secrets["bogus join"] = auth.new_token()
    out.secrets["bogus resume"] = auth.new_token()
    good = (("authorization", f"Bearer {admin}"),)
    async with (
        metasre_serve(verbose=True, env={"METASRE_ADMIN_TOKEN": admin}) as served,
        grpc.aio.insecure_channel(served.address) as channel,
    ):
        control = control_pb2_grpc.ControlServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await control.ListScenarios(
                control_pb2.ListScenariosRequest(),
                metadata=(("authorization", f"Bearer {out.secrets['wrong admin']}"),),
            )
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
        created = await create(control, ("a", "b"), metadata=good)
        other = await create(control, ("x",), metadata=good)
        sid = out.session_id = created.session.session_id
        out.secrets["join a"] = created.tokens[0].join_token
        out.secrets["join b"] = created.tokens[1].join_token
        out.secrets["join x"] = other.tokens[0].join_token

        watch = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
            watch_pb2.WatchSessionRequest(session_id=sid), metadata=good
        )

        def record(agent: str, reply: agent_pb2.ConnectResponse, tool: str) -> None:
            assert reply.WhichOneof("response") == "result", reply
            out.applied.append((agent, reply.result.tick, tool))

        a = AgentClient(channel)
        joined = await a.join(sid, out.secrets["join a"])
        out.secrets["resume a"] = joined.resume_token
        record("a", await a.result_or_error(a.tool("get_alerts")), "get_alerts")
        a.call.cancel()  # a's stream drops

        b = AgentClient(channel)
        for wrong in (out.secrets["bogus join"], out.secrets["join x"]):  # wrong, then stolen
            b.send(
                agent_pb2.ConnectRequest(join=agent_pb2.JoinSeat(session_id=sid, join_token=wrong))
            )
            assert details((await b.expect("error")).error)[0].reason == "TOKEN_INVALID"
        out.secrets["resume b"] = (await b.join(sid, out.secrets["join b"])).resume_token
        record("b", await b.result_or_error(b.tool("check_dependencies")), "check_dependencies")
        unary = await agent_pb2_grpc.AgentServiceStub(channel).CallTool(
            agent_pb2.CallToolRequest(
                session_id=sid,
                token=out.secrets["join b"],
                call=agent_pb2.ToolCall(
                    call_id="unary", tool="read_logs", args=struct({"service": "payment-service"})
                ),
            )
        )
        out.applied.append(("b", unary.result.tick, "read_logs"))

        again = AgentClient(channel)
        for token in (out.secrets["bogus resume"], out.secrets["resume a"]):
            again.send(
                agent_pb2.ConnectRequest(
                    resume=agent_pb2.ResumeSeat(session_id=sid, resume_token=token)
                )
            )
        assert details((await again.expect("error")).error)[0].reason == "TOKEN_INVALID"
        await again.expect("joined")
        again.agent_id = "a"
        for tool, args in pay_solution():
            call_id = again.tool(tool, args, call_id=f"resumed-{tool}")
            record("a", await again.result_or_error(call_id), tool)
        await again.until_end()
        while (await asyncio.wait_for(watch.read(), TIMEOUT)).event.WhichOneof("event") != "ended":
            pass
        watch.cancel()
        again.close()
        b.close()
        out.exit_code = await served.stop()
    out.log_text = served.log_text
    out.events = served.events()
    return out


@pytest.fixture(scope="module")
def played() -> Played:
    # One server run serves every test here; the scenario runs on its own event loop.
    return asyncio.run(play())


def test_no_token_ever_reaches_the_logs(played: Played):
    assert played.exit_code == 0
    # The capture is real: it holds the session's whole life at debug level.
    names = [e["event"] for e in played.events]
    for expected in ("serving", "session_created", "seat_taken", "call_applied", "applied"):
        assert expected in names
    assert "episode_ended" in names and "stopped" in names
    assert len(played.secrets) == 9
    for what, token in played.secrets.items():
        assert len(token) >= 32
        assert token not in played.log_text, f"the {what} token appears in the server's logs"
    assert "Bearer" not in played.log_text


def test_applied_calls_are_logged_with_session_agent_and_tick(played: Played):
    applied = [e for e in played.events if e["event"] == "call_applied"]
    assert len(applied) == len(played.applied) == 5
    logged = [(e["agent_id"], e["tick"], e["tool"]) for e in applied]
    assert logged == sorted(played.applied, key=lambda x: x[1])
    assert [tick for _, tick, _ in logged] == list(range(1, 6))
    for e in applied:
        assert e["session_id"] == played.session_id
        assert e["level"] == "info" and e["timestamp"]
    # Joins and resumes are bound to the session and the agent too.
    taken = [
        (e["session_id"], e["agent_id"], e["resume"])
        for e in played.events
        if e["event"] == "seat_taken" and e["session_id"] == played.session_id
    ]
    assert taken == [
        (played.session_id, "a", False),
        (played.session_id, "b", False),
        (played.session_id, "a", True),
    ]
    ended = next(e for e in played.events if e["event"] == "episode_ended")
    assert (ended["session_id"], ended["tick"]) == (played.session_id, 5)


@pytest.mark.parametrize("log_format", ["json", "console"])
def test_a_logged_traceback_shows_no_local_variables(
    capsys: pytest.CaptureFixture[str], log_format: str
):
    # A bug's traceback is logged (see status_of); the frames' locals would carry whatever
    # secrets the failing call held, so the server's renderers must leave them out.
    import logging

    from metasre.cli.logs import configure

    token = secrets.token_urlsafe(24)
    saved = structlog.get_config()
    try:
        configure(logging.INFO, log_format)

        def handler(join_token: str) -> None:
            raise RuntimeError("a bug")

        try:
            handler(token)
        except RuntimeError as exc:
            status_of(exc, call_id="c1")
    finally:
        structlog.configure(**saved)
    err = capsys.readouterr().err
    assert "internal_error" in err and "a bug" in err and token not in err
    if log_format == "json":
        line = json.loads(err.strip().splitlines()[-1])
        assert line["event"] == "internal_error" and line["exception"]
