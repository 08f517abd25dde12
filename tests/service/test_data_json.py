"""StreamOptions.data_as_json: a stream that asks gets its calls' data as JSON in data_json and no
Struct; one that does not gets the Struct as before; the SDK reads both into the same data.

A real server on 127.0.0.1:0.
"""

from __future__ import annotations

from typing import Any

import orjson

from metasre.agents.client import AgentConnection, MetasreClient
from metasre.agents.plain import struct_dict
from metasre.v1 import agent_pb2

from .conftest import AgentClient, create


def _join(sid: str, token: str, *, as_json: bool) -> agent_pb2.ConnectRequest:
    options = agent_pb2.StreamOptions(data_as_json=as_json)
    return agent_pb2.ConnectRequest(
        join=agent_pb2.JoinSeat(session_id=sid, join_token=token, options=options)
    )


async def _joined(client: AgentClient, sid: str, token: str, *, as_json: bool) -> None:
    client.send(_join(sid, token, as_json=as_json))
    client.agent_id = (await client.expect("joined")).joined.agent_id


def _floats(value: Any) -> Any:
    """`value` with every number a float, as a Struct holds them."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return value


async def test_each_stream_gets_the_form_it_asked_for(channel, control):
    created = await create(control, ("a", "b"))
    sid = created.session.session_id
    a, b = AgentClient(channel), AgentClient(channel)
    await _joined(a, sid, created.tokens[0].join_token, as_json=True)
    await _joined(b, sid, created.tokens[1].join_token, as_json=False)
    for tool, args in (("get_alerts", {}), ("read_logs", {"service": "nope"})):
        call_id = a.tool(tool, args)
        mine = (await a.result_or_error(call_id)).result
        theirs = (await b.expect("applied", lambda m, c=call_id: m.applied.call_id == c)).applied
        # The asking stream: JSON only (nothing to parse as a Struct); the other: the Struct.
        assert mine.data_json and not mine.HasField("data")
        assert theirs.HasField("data") and not theirs.data_json
        data = orjson.loads(mine.data_json)
        assert _floats(data) == struct_dict(theirs.data)
        call_id = b.tool(tool, args)
        result = (await b.result_or_error(call_id)).result
        told = (await a.expect("applied", lambda m, c=call_id: m.applied.call_id == c)).applied
        assert result.HasField("data") and not result.data_json
        assert told.data_json and not told.HasField("data")
        assert _floats(orjson.loads(told.data_json)) == struct_dict(result.data)
    # The same call_id again: the original result, in the stream's form.
    again = a.tool("get_alerts", {}, call_id="a-1")
    repeat = (await a.result_or_error(again)).result
    assert repeat.data_json and not repeat.HasField("data")
    a.close()
    b.close()


async def _heard(conn: AgentConnection, call_id: str) -> dict[str, Any]:
    """The teammate's call `call_id` as `conn` was told of it, once it has been."""
    seen = conn.news
    while True:
        for call in conn.inbox.applied:
            if call["call_id"] == call_id:
                return call
        seen = await conn.next_news(seen, timeout=10)


async def test_the_sdk_reads_both_forms_into_the_same_data(server):
    async with MetasreClient(server.address) as client:
        session = await client.create_session(
            "meta-sre/migration-cascade-v3", seed=0, seats=["j", "s"]
        )
        j = client.agent(session.id, session.tokens["j"])  # JSON, the SDK's default
        s = client.agent(session.id, session.tokens["s"], data_as_json=False)
        async with j, s:
            alerts = await j.call("get_alerts")
            service = alerts.data["alerts"][0]["service"]
            # JSON keeps whole numbers whole; a Struct's are doubles.
            assert type(alerts.data["alerts"][0]["since_minute"]) is int
            told = await _heard(s, alerts.call_id)
            assert type(told["data"]["alerts"][0]["since_minute"]) is float
            for tool, args in (("list_files", {}), ("read_logs", {"service": service})):
                mine = await j.call(tool, args)
                told = await _heard(s, mine.call_id)
                assert _floats(mine.data) == told["data"]
                theirs = await s.call(tool, args)  # the world moved on: data of its own
                heard = await _heard(j, theirs.call_id)
                # Teammates' calls are the same plain data in either form, without data_json.
                assert set(heard) == set(told) and "data_json" not in heard
                assert _floats(heard["data"]) == theirs.data
