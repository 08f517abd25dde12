"""What CreateSession and a join build once and share: instances, openings, their wire forms."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from metasre.service.core.coordinator import make_episode
from metasre.service.core.events import LogEntry, Started
from metasre.service.core.openings import OpeningForms
from metasre.service.store import codec as records
from metasre.service.wire import convert
from metasre.service.wire.undecodable import Refused, RejectUndecodable
from metasre.simulator import Episode, resolve
from metasre.simulator import episode as episode_module
from metasre.v1 import agent_pb2, common_pb2, control_pb2

from .conftest import PAY, AgentClient, create, details

CHEAP = "meta-sre/migration-cascade-v3"


def _counted_renders(monkeypatch: pytest.MonkeyPatch, seed: int) -> list[int]:
    """The ticks of the observations rendered from here on; `seed` forgets its opening."""
    kept = resolve(PAY).instance(seed).opening
    kept.board = kept.observation = None
    renders: list[int] = []
    real = episode_module.Observation

    def counting(**fields: Any) -> Any:
        renders.append(fields["step_budget"] - fields["steps_left"])
        return real(**fields)

    monkeypatch.setattr(episode_module, "Observation", counting)
    return renders


async def test_episodes_of_a_seed_share_the_opening_not_the_state(monkeypatch):
    renders = _counted_renders(monkeypatch, 3)
    # Seed 4's opening too may have been made by an earlier test of this process: forget it.
    kept = resolve(PAY).instance(4).opening
    kept.board = kept.observation = None
    a = await make_episode(PAY, 3, None)
    b = await make_episode(PAY, 3, None)
    other = await make_episode(PAY, 4, None)
    first = a.observation()
    assert b.observation() == first
    assert renders == [0]  # rendered once for the seed
    assert other.observation() != first

    # Sharing the opening shares nothing an episode changes: b plays on, a is still at the page.
    b.apply("x", "get_alerts", {})
    assert b.observation() != first
    assert a.observation() == first
    assert Episode.make(PAY, 3, None).observation() == first
    assert renders.count(0) == 2  # seed 3 once, seed 4 once


def _started(observation: Any, episode: int = 1, seed: int = 3) -> LogEntry:
    return LogEntry(
        sequence=1,
        episode=episode,
        tick=0,
        event=Started(episode=episode, seed=seed, observation=observation),
    )


async def test_the_stored_opening_is_built_once_and_equals_the_record(monkeypatch):
    built: list[Any] = []

    def record(obs: Any) -> dict[str, Any]:
        built.append(obs)
        return records.observation_record(obs)

    monkeypatch.setattr(records, "_OPENING_RECORDS", OpeningForms(4, record))
    obs = (await make_episode(PAY, 3, None)).observation()
    kind, agent, payload = records.event_record(_started(obs))
    again = records.event_record(_started(obs, episode=2, seed=7))[2]
    assert (kind, agent) == ("started", "")
    assert payload["observation"] == records.observation_record(obs)
    assert again["observation"] == payload["observation"] and len(built) == 1
    assert (again["episode"], again["seed"]) == (2, 7)
    # An opening read back from the store is equal, not the same object: it finds the record.
    stored = records.observation_of(payload["observation"])
    assert (
        records.event_record(_started(stored, episode=3))[2]["observation"] == again["observation"]
    )
    assert len(built) == 1
    # Another seed's opening is another value: it gets its own.
    other = (await make_episode(PAY, 4, None)).observation()
    assert records.event_record(_started(other, seed=4))[2]["observation"] == (
        records.observation_record(other)
    )
    assert len(built) == 2


async def test_the_opening_bytes_equal_the_messages_they_stand_for():
    obs = (await make_episode(PAY, 3, None)).observation()
    event = Started(episode=2, seed=11, observation=obs)
    wire = agent_pb2.ConnectResponse.FromString(convert.started_response_bytes(event, 42))
    assert wire == agent_pb2.ConnectResponse(episode_start=convert.started_pb(event), sequence=42)
    assert convert.shared_observation_bytes(obs) == convert.observation_pb(obs).SerializeToString()

    joined = agent_pb2.Joined(
        session=common_pb2.SessionInfo(session_id="s", seed=11),
        agent_id="a",
        role="r",
        resume_token="t",
    )
    wire = agent_pb2.ConnectResponse.FromString(
        convert.joined_response_bytes(joined, convert.shared_observation_bytes(obs))
    )
    expected = agent_pb2.Joined()
    expected.CopyFrom(joined)
    expected.observation.CopyFrom(convert.observation_pb(obs))
    assert wire == agent_pb2.ConnectResponse(joined=expected)


def test_the_shared_observations_are_made_once_and_bounded(monkeypatch: pytest.MonkeyPatch):
    made: list[int] = []

    def serialize(obs: Any) -> bytes:
        made.append(len(made))
        return convert.observation_pb(obs).SerializeToString()

    monkeypatch.setattr(convert, "_SHARED_OBSERVATIONS", OpeningForms(2, serialize))
    openings = [Episode.make(CHEAP, seed, None).observation() for seed in range(3)]
    for obs in openings:
        assert convert.shared_observation_bytes(obs) == serialize(obs)
    assert convert._SHARED_OBSERVATIONS.kept() == openings[1:]
    assert len(made) == 6  # each opening serialized once by the cache, once here
    convert.shared_observation_bytes(openings[1])  # kept: used, and now the most recent
    assert convert._SHARED_OBSERVATIONS.kept() == [openings[2], openings[1]]
    assert len(made) == 6


async def test_the_interceptor_wraps_each_method_once_and_still_refuses_garbage():
    interceptor = RejectUndecodable(4 * 1024 * 1024)

    async def answer(request: Any, context: Any) -> Any:
        return request

    unary = grpc.unary_unary_rpc_method_handler(
        answer,
        control_pb2.CreateSessionRequest.FromString,
        control_pb2.CreateSessionResponse.SerializeToString,
    )
    replaced = grpc.unary_unary_rpc_method_handler(
        answer, control_pb2.GetSessionRequest.FromString, None
    )
    handlers = {"/m/A": unary}

    async def continuation(details: Any) -> Any:
        return handlers.get(details.method)

    class Details:
        def __init__(self, method: str) -> None:
            self.method = method

    first = await interceptor.intercept_service(continuation, Details("/m/A"))  # type: ignore[arg-type]
    assert first is not unary
    assert await interceptor.intercept_service(continuation, Details("/m/A")) is first  # type: ignore[arg-type]
    assert isinstance(first.request_deserializer(b"\xff\xfe"), Refused)
    parsed = first.request_deserializer(
        control_pb2.CreateSessionRequest(scenario_id="x").SerializeToString()
    )
    assert parsed.scenario_id == "x"

    handlers["/m/A"] = replaced  # a server that hands out another handler gets it wrapped anew
    again = await interceptor.intercept_service(continuation, Details("/m/A"))  # type: ignore[arg-type]
    assert again is not first
    assert isinstance(again.request_deserializer(b"\xff\xfe"), Refused)
    assert await interceptor.intercept_service(continuation, Details("/m/none")) is None  # type: ignore[arg-type]


async def test_garbage_is_refused_on_every_call_of_a_wrapped_method(channel: grpc.aio.Channel):
    raw = channel.unary_unary("/metasre.v1.ControlService/CreateSession")
    for _ in range(3):  # the first call wraps the method, the others reuse it
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await raw(b"\xff\xfe garbage \x00\x01")
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    stub = channel.unary_unary(
        "/metasre.v1.ControlService/CreateSession",
        request_serializer=control_pb2.CreateSessionRequest.SerializeToString,
        response_deserializer=control_pb2.CreateSessionResponse.FromString,
    )
    created = await stub(control_pb2.CreateSessionRequest(scenario_id=PAY, seed=1))
    assert created.session.scenario_id == PAY
    assert len(created.tokens) == 1

    connect = channel.stream_stream("/metasre.v1.AgentService/Connect")
    for _ in range(2):
        call = connect()
        await call.write(b"\xff\xfe garbage")
        response = agent_pb2.ConnectResponse.FromString(await call.read())
        assert details(response.error)[0].reason == "INVALID_REQUEST"
        call.cancel()


async def test_a_join_after_the_first_call_sees_the_world_as_it_is_now(server, channel, control):
    created = await create(control, ("a", "b"))
    sid = created.session.session_id
    a = AgentClient(channel)
    await a.join(sid, created.tokens[0].join_token)
    await a.result_or_error(a.tool("get_alerts"))
    shared = convert._SHARED_OBSERVATIONS.kept()
    joined = await AgentClient(channel).join(sid, created.tokens[1].join_token)
    now = server.registry.get(sid)[0].episode.observation()
    assert joined.observation == convert.observation_pb(now)
    assert joined.observation.minute > 0
    assert convert._SHARED_OBSERVATIONS.kept() == shared  # seen once: not kept
