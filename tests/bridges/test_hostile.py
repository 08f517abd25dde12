"""Hostile input through the bridges' public paths: bad JSON, huge messages, wrong tokens, a
seat token used for another session, capacity. Each gets a clear error, the connection stays
usable, and no other session is touched (its next call gets the next tick: nothing was applied
to it by the attacks)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from metasre.agents.bridges import Limits
from metasre.simulator import resolve
from metasre.simulator.scenarios.splits import split_seeds

from .conftest import Bridge, start_bridge

SCENARIO = "payment-bad-deploy"
TEST_SEED = split_seeds(resolve(SCENARIO), "test", 1)[0]


async def ask(ws: ClientConnection, message: Any) -> dict[str, Any]:
    await ws.send(message if isinstance(message, str | bytes) else json.dumps(message))
    return dict(json.loads(await ws.recv()))


def ws_url(bridge: Bridge) -> str:
    return bridge.url.replace("http://", "ws://") + "/ws"


async def call(ws: ClientConnection, tool: str, **arguments: Any) -> dict[str, Any]:
    return await ask(
        ws,
        {"type": "step", "data": {"type": "call_tool", "tool_name": tool, "arguments": arguments}},
    )


BAD_MESSAGES: dict[str, tuple[Any, str, str]] = {
    "not-json": ("{not json", "INVALID_JSON", "not JSON"),
    "a-list": ("[1, 2]", "INVALID_JSON", "JSON object"),
    "type-a-number": ({"type": 5}, "INVALID_JSON", "JSON object"),
    "unknown-type": ({"type": "exec", "data": {}}, "UNKNOWN_TYPE", "reset, step, state or close"),
    "data-a-string": ({"type": "reset", "data": "x"}, "VALIDATION_ERROR", "JSON object"),
    "reset-unknown-key": (
        {"type": "reset", "data": {"scenario": SCENARIO, "grade_override": 1}},
        "VALIDATION_ERROR",
        "does not take grade_override",
    ),
    "reset-no-scenario": ({"type": "reset", "data": {}}, "VALIDATION_ERROR", "scenario="),
    "reset-unknown-scenario": (
        {"type": "reset", "data": {"scenario": "no-such-incident"}},
        "SESSION_ERROR",
        "no-such-incident",
    ),
    "seed-negative": (
        {"type": "reset", "data": {"scenario": SCENARIO, "seed": -1}},
        "VALIDATION_ERROR",
        "seed",
    ),
    "seed-a-string": (
        {"type": "reset", "data": {"scenario": SCENARIO, "seed": "7"}},
        "VALIDATION_ERROR",
        "seed",
    ),
    "seed-a-bool": (
        {"type": "reset", "data": {"scenario": SCENARIO, "seed": True}},
        "VALIDATION_ERROR",
        "seed",
    ),
    "seed-huge": (
        {"type": "reset", "data": {"scenario": SCENARIO, "seed": 2**70}},
        "VALIDATION_ERROR",
        "seed",
    ),
    "split-unknown": (
        {"type": "reset", "data": {"scenario": SCENARIO, "split": "dev"}},
        "VALIDATION_ERROR",
        "split 'dev' is not one of train, test",
    ),
    "seed-outside-its-split": (
        {"type": "reset", "data": {"scenario": SCENARIO, "seed": TEST_SEED, "split": "train"}},
        "VALIDATION_ERROR",
        "in the test split, not train",
    ),
    "seats-empty": (
        {"type": "reset", "data": {"scenario": SCENARIO, "seats": []}},
        "VALIDATION_ERROR",
        "seats",
    ),
    "seats-a-string": (
        {"type": "reset", "data": {"scenario": SCENARIO, "seats": "ab"}},
        "VALIDATION_ERROR",
        "seats",
    ),
    "view-unknown-key": (
        {
            "type": "reset",
            "data": {"scenario": SCENARIO, "seats": [{"agent_id": "a", "view": {"root": True}}]},
        },
        "VALIDATION_ERROR",
        "view",
    ),
    "agent-not-a-seat": (
        {"type": "reset", "data": {"scenario": SCENARIO, "seats": ["a"], "agent_id": "b"}},
        "VALIDATION_ERROR",
        "not one of the seats",
    ),
    "policy-unknown": (
        {"type": "reset", "data": {"scenario": SCENARIO, "turn_policy": "CHAOS"}},
        "VALIDATION_ERROR",
        "turn_policy",
    ),
    "spirit-out-of-range": (
        {"type": "reset", "data": {"scenario": SCENARIO, "team_spirit": 7}},
        "VALIDATION_ERROR",
        "team_spirit",
    ),
    "join-and-create-mixed": (
        {"type": "reset", "data": {"session_id": "x", "token": "y", "seed": 3}},
        "VALIDATION_ERROR",
        "session_id and token only",
    ),
    "join-wrong-token": (
        {"type": "reset", "data": {"session_id": "0123456789abcdef", "token": "guess"}},
        "SESSION_ERROR",
        "refused the seat",
    ),
    "step-before-reset": (
        {"type": "step", "data": {"type": "call_tool", "tool_name": "get_alerts"}},
        "SESSION_ERROR",
        "reset first",
    ),
    "action-unknown": (
        {"type": "step", "data": {"type": "shell", "cmd": "id"}},
        "VALIDATION_ERROR",
        "unknown action type",
    ),
    "action-extra-field": (
        {"type": "step", "data": {"type": "call_tool", "tool_name": "x", "reward": 1}},
        "VALIDATION_ERROR",
        "reward is not one of them",
    ),
    "arguments-a-list": (
        {"type": "step", "data": {"type": "call_tool", "tool_name": "x", "arguments": [1]}},
        "VALIDATION_ERROR",
        "arguments must be a JSON object",
    ),
    "tool-name-a-number": (
        {"type": "step", "data": {"type": "call_tool", "tool_name": 3}},
        "VALIDATION_ERROR",
        "tool_name",
    ),
    "huge": ("x" * (2 << 20), "VALIDATION_ERROR", "at most"),
}


async def test_every_bad_message_is_an_error_frame_and_other_sessions_are_untouched(
    bridge: Bridge,
) -> None:
    async with (
        connect(ws_url(bridge), max_size=None) as victim,
        connect(ws_url(bridge), max_size=None) as attacker,
    ):
        first = await ask(
            victim,
            {"type": "reset", "data": {"scenario": SCENARIO, "seed": 1, "seats": ["a", "b"]}},
        )
        victim_session = first["data"]["observation"]["session_id"]
        b_token = first["data"]["metadata"]["tokens"]["b"]
        before = await call(victim, "get_alerts")
        assert before["data"]["metadata"]["tick"] == 1
        for name, (message, code, says) in BAD_MESSAGES.items():
            reply = await ask(attacker, message)
            assert reply["type"] == "error", (name, reply)
            assert reply["data"]["code"] == code and says in reply["data"]["message"], (name, reply)
            # The socket is still open and answers.
            state = await ask(attacker, {"type": "state"})
            assert state["type"] == "state", name
        # A seat token of the victim's session used with another session's id.
        other = await ask(attacker, {"type": "reset", "data": {"scenario": SCENARIO, "seed": 2}})
        other_session = other["data"]["observation"]["session_id"]
        stolen = await ask(
            attacker, {"type": "reset", "data": {"session_id": other_session, "token": b_token}}
        )
        assert stolen["type"] == "error" and stolen["data"]["code"] == "SESSION_ERROR"
        # The seat the victim holds, asked for with the victim's session id and a made-up token.
        guessed = await ask(
            attacker, {"type": "reset", "data": {"session_id": victim_session, "token": "a"}}
        )
        assert guessed["type"] == "error"
        # A refused tool call is an observation with the server's validation, not an error.
        refused = await call(victim, "read_logs", bogus=1)
        assert refused["type"] == "observation" and refused["data"]["done"] is False
        error = refused["data"]["observation"]["error"]
        assert error["error_type"] == "invalid_args" and error["violations"]
        after = await call(victim, "get_alerts")
        assert after["data"]["metadata"]["tick"] == 2  # nothing else was applied to it
        state = await ask(victim, {"type": "state"})
        assert state["data"]["episode_id"] == victim_session


async def test_a_taken_seat_cannot_be_taken_twice(bridge: Bridge) -> None:
    async with (
        connect(ws_url(bridge)) as one,
        connect(ws_url(bridge)) as two,
        connect(ws_url(bridge)) as three,
    ):
        first = await ask(
            one, {"type": "reset", "data": {"scenario": SCENARIO, "seats": ["a", "b"]}}
        )
        sid, token = (
            first["data"]["observation"]["session_id"],
            first["data"]["metadata"]["tokens"]["b"],
        )
        joined = await ask(two, {"type": "reset", "data": {"session_id": sid, "token": token}})
        assert joined["type"] == "observation"
        again = await ask(three, {"type": "reset", "data": {"session_id": sid, "token": token}})
        assert again["type"] == "error" and "refused the seat" in again["data"]["message"]


async def test_a_role_seat_sees_its_view_only(bridge: Bridge) -> None:
    async with connect(ws_url(bridge), max_size=None) as ws:
        first = await ask(
            ws,
            {
                "type": "reset",
                "data": {
                    "scenario": "split-evidence",
                    "seed": 3,
                    "seats": [
                        {"agent_id": "rm", "role": "release-manager"},
                        {"agent_id": "app", "role": "app-oncall"},
                    ],
                },
            },
        )
        seen = first["data"]["observation"]
        assert seen["role"] == "release-manager" and seen["view"]["code"] is False
        everyone = {s["name"] for s in seen["dashboard"]["services"]}
        assert set(seen["view"]["services"]) == everyone
        refused = await call(ws, "view_file", path="README.md")
        error = refused["data"]["observation"]["error"]
        assert error is not None and "OUTSIDE_VIEW" in (error["code"], error.get("reason"))


async def test_capacity_is_an_error_frame_and_the_socket_stays(server: Any) -> None:
    srv, task, url = await start_bridge(server.address, Limits(max_seats=1))
    try:
        wsu = url.replace("http://", "ws://") + "/ws"
        async with connect(wsu) as one, connect(wsu) as two:
            assert (await ask(one, {"type": "reset", "data": {"scenario": SCENARIO}}))[
                "type"
            ] == "observation"
            full = await ask(two, {"type": "reset", "data": {"scenario": SCENARIO}})
            assert full["data"]["code"] == "CAPACITY_REACHED"
            await one.send(json.dumps({"type": "close"}))
            # The bridge lets the seat go before it answers with the close frame.
            await one.wait_closed()
            async with httpx.AsyncClient() as http:
                health = (await http.get(f"{url}/health")).json()
            assert health["seats"] == 0
            assert (await ask(two, {"type": "reset", "data": {"scenario": SCENARIO}}))[
                "type"
            ] == "observation"
    finally:
        srv.should_exit = True
        await task


async def test_creating_sessions_can_require_the_bridges_token(server: Any) -> None:
    srv, task, url = await start_bridge(server.address, access_token="s3cret")
    try:
        wsu = url.replace("http://", "ws://") + "/ws"
        auth = {"Authorization": "Bearer s3cret"}
        async with connect(wsu) as anon, connect(wsu, additional_headers=auth) as owner:
            refused = await ask(anon, {"type": "reset", "data": {"scenario": SCENARIO}})
            assert refused["data"]["code"] == "SESSION_ERROR"
            assert "access token" in refused["data"]["message"]
            made = await ask(
                owner, {"type": "reset", "data": {"scenario": SCENARIO, "seats": ["a", "b"]}}
            )
            sid = made["data"]["observation"]["session_id"]
            # A seat's own token is enough to join it.
            joined = await ask(
                anon,
                {
                    "type": "reset",
                    "data": {"session_id": sid, "token": made["data"]["metadata"]["tokens"]["b"]},
                },
            )
            assert joined["data"]["observation"]["agent_id"] == "b"
        async with httpx.AsyncClient() as http:
            assert (
                await http.post(f"{url}/sessions", json={"scenario": SCENARIO})
            ).status_code == 401
            wrong = {"Authorization": "Bearer s3cre"}
            assert (
                await http.post(f"{url}/sessions", json={"scenario": SCENARIO}, headers=wrong)
            ).status_code == 401
    finally:
        srv.should_exit = True
        await task


# -- MCP ------------------------------------------------------------------------------------------

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}


async def test_mcp_refuses_wrong_credentials_and_bad_requests_and_keeps_the_seat(
    bridge: Bridge,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        one = (
            await http.post(
                f"{bridge.url}/sessions", json={"scenario": SCENARIO, "seats": ["a", "b"]}
            )
        ).json()
        two = (await http.post(f"{bridge.url}/sessions", json={"scenario": SCENARIO})).json()
        a, b = one["seats"]["a"], one["seats"]["b"]

        def bearer(token: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {token}"}

        # The seat's legitimate MCP session.
        opened = await http.post(a["mcp_url"], json=INIT, headers=bearer(a["token"]))
        assert (
            opened.status_code == 200 and opened.json()["result"]["protocolVersion"] == "2025-06-18"
        )
        sid = opened.headers["mcp-session-id"]
        mine = {**bearer(a["token"]), "mcp-session-id": sid}
        tick1 = (
            await http.post(
                a["mcp_url"],
                headers=mine,
                json={
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "get_alerts", "arguments": {}},
                },
            )
        ).json()
        assert tick1["result"]["structuredContent"]["metadata"]["tick"] == 1

        cases: list[tuple[str, str, dict[str, str], Any, int]] = [
            ("no-credential", a["mcp_url"], {}, INIT, 401),
            ("wrong-token", a["mcp_url"], bearer("guess"), INIT, 403),
            ("other-seat's-token", a["mcp_url"], bearer(b["token"]), INIT, 403),
            (
                "token-of-another-session",
                two["seats"]["agent"]["mcp_url"],
                bearer(a["token"]),
                INIT,
                403,
            ),
            (
                "session-id-with-another-token",
                a["mcp_url"],
                {**bearer(b["token"]), "mcp-session-id": sid},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                403,
            ),
            (
                "session-id-on-another-path",
                b["mcp_url"],
                mine,
                {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                403,
            ),
            (
                "unknown-session-id",
                a["mcp_url"],
                {**bearer(a["token"]), "mcp-session-id": "x"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                404,
            ),
            (
                "no-session-id",
                a["mcp_url"],
                bearer(a["token"]),
                {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                400,
            ),
            ("bad-json", a["mcp_url"], mine, b"{nope", 400),
            ("a-batch", a["mcp_url"], mine, [INIT], 400),
            ("huge", a["mcp_url"], mine, b"x" * (2 << 20), 413),
        ]
        for name, url, headers, body, status in cases:
            if isinstance(body, bytes):
                response = await http.post(url, content=body, headers=headers)
            else:
                response = await http.post(url, json=body, headers=headers)
            assert response.status_code == status, (name, response.text)
            assert "error" in response.json() and response.json()["error"]["message"], name
        for name, message, code in [
            (
                "unknown-method",
                {"jsonrpc": "2.0", "id": 4, "method": "sampling/createMessage"},
                -32601,
            ),
            (
                "name-a-number",
                {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 7}},
                -32602,
            ),
        ]:
            reply = (await http.post(a["mcp_url"], json=message, headers=mine)).json()
            assert reply["error"]["code"] == code, name
        tick2 = (
            await http.post(
                a["mcp_url"],
                headers=mine,
                json={
                    "jsonrpc": "2.0",
                    "id": 6,
                    "method": "tools/call",
                    "params": {"name": "get_alerts", "arguments": {}},
                },
            )
        ).json()
        assert tick2["result"]["structuredContent"]["metadata"]["tick"] == 2
        closed = await http.delete(a["mcp_url"], headers=mine)
        assert closed.status_code == 200
        gone = await http.post(
            a["mcp_url"], headers=mine, json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
        )
        assert gone.status_code == 404
        # Neither the wrong tokens aimed at them nor b's token used on a's path ended the other
        # seat or the other session: each still opens with its own token.
        for seat in (b, two["seats"]["agent"]):
            again = await http.post(seat["mcp_url"], json=INIT, headers=bearer(seat["token"]))
            assert again.status_code == 200, again.text


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"scenario": SCENARIO, "seed": -1}, "seed"),
        ({"scenario": SCENARIO, "owner_token": "mine"}, "does not take owner_token"),
        ({"scenario": "nope"}, "refused"),
        ([SCENARIO], "JSON object"),
    ],
    ids=["seed", "owner-token", "unknown-scenario", "not-an-object"],
)
async def test_post_sessions_refuses_bad_bodies(bridge: Bridge, body: Any, says: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(f"{bridge.url}/sessions", json=body)
    assert response.status_code == 400 and says in response.json()["error"]


async def test_many_websockets_play_at_once(bridge: Bridge) -> None:
    async def one(seed: int) -> tuple[str, int]:
        async with connect(ws_url(bridge), max_size=None) as ws:
            first = await ask(ws, {"type": "reset", "data": {"scenario": SCENARIO, "seed": seed}})
            step = await call(ws, "get_alerts")
            await ws.send(json.dumps({"type": "close"}))
            await ws.wait_closed()
            return first["data"]["observation"]["session_id"], step["data"]["metadata"]["tick"]

    played = await asyncio.gather(*(one(seed) for seed in range(32)))
    assert len({sid for sid, _ in played}) == 32 and {tick for _, tick in played} == {1}


async def test_resets_close_the_sessions_they_leave(bridge: Bridge, server: Any) -> None:
    """A trainer resets one socket thousands of times: the bridge closes each session it made
    when its last seat leaves, so the server's session limit is never reached."""
    async with connect(ws_url(bridge), max_size=None) as ws:
        made = set()
        for seed in range(5):
            first = await ask(ws, {"type": "reset", "data": {"scenario": SCENARIO, "seed": seed}})
            made.add(first["data"]["observation"]["session_id"])
            open_now = {s.id for s in server.registry.sessions()}
            assert open_now == {first["data"]["observation"]["session_id"]}
        assert len(made) == 5
        await ws.send(json.dumps({"type": "close"}))
        await ws.wait_closed()
    assert server.registry.sessions() == []


async def test_an_mcp_session_whose_stream_ended_is_let_go(bridge: Bridge, server: Any) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        one = (await http.post(f"{bridge.url}/sessions", json={"scenario": SCENARIO})).json()
        two = (await http.post(f"{bridge.url}/sessions", json={"scenario": SCENARIO})).json()
        a, b = one["seats"]["agent"], two["seats"]["agent"]
        opened = await http.post(
            a["mcp_url"], json=INIT, headers={"Authorization": f"Bearer {a['token']}"}
        )
        assert opened.status_code == 200
        assert (await http.get(f"{bridge.url}/health")).json()["seats"] == 1
        await server.registry.close(one["session_id"])  # as the server's idle limit would
        sid = opened.headers["mcp-session-id"]
        ended = await http.post(
            a["mcp_url"],
            headers={"Authorization": f"Bearer {a['token']}", "mcp-session-id": sid},
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "get_alerts", "arguments": {}},
            },
        )
        assert "stream ended" in ended.json()["error"]["message"]
        # The next initialize forgets the ended one: only the new seat is held.
        opened = await http.post(
            b["mcp_url"], json=INIT, headers={"Authorization": f"Bearer {b['token']}"}
        )
        assert opened.status_code == 200
        assert (await http.get(f"{bridge.url}/health")).json()["seats"] == 1
