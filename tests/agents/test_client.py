"""The client SDK against a real server: sessions, calls, pushed events, typed errors."""

import asyncio

import pytest

from metasre.agents import ClientError, EpisodeOverError, MetasreClient
from metasre.agents.policies import ExpertPolicy
from metasre.agents.sync import SyncClient, WireCaller
from metasre.simulator import scenario_ids

PAY = "meta-sre/payment-bad-deploy-v2"


async def test_a_session_round_trip_with_pushed_events(server):
    async with MetasreClient(server.address) as client:
        tools = {t["name"] for t in await client.list_tools()}
        assert {"read_logs", "submit_report"} <= tools
        session = await client.create_session(PAY, seed=0, seats=["a", "b"])
        async with (
            client.agent(session.id, session.tokens["a"]) as a,
            client.agent(session.id, session.tokens["b"]) as b,
        ):
            assert a.agent_id == "a" and a.observation["severity"] == "P1"
            result = await a.call("read_logs", {"service": "payment-service"})
            assert result.ok and result.tick == 1 and "payment-service" in result.text
            assert set(result.reward["components"]) == {"step_cost"}
            await b.call("send_message", {"text": "rolling back", "to": ["a"]})
            while not a.inbox.messages:
                await a.next_news(a.news, 5)
            assert a.inbox.messages[0]["text"] == "rolling back"
            while not b.inbox.applied:
                await b.next_news(b.news, 5)
            assert b.inbox.applied[0]["tool"] == "read_logs"


async def test_refusals_are_typed_errors_with_the_servers_reason(server):
    async with MetasreClient(server.address) as client:
        session = await client.create_session(PAY, seed=0, seats=["a"])
        async with client.agent(session.id, session.tokens["a"]) as a:
            with pytest.raises(ClientError) as info:
                await a.call("run_tests", {"suite": "smoke"})
            assert info.value.code == "INVALID_ARGUMENT"
            assert any(f == "args.suite" for f, _ in info.value.violations)
            ok = await a.call("get_alerts")  # the stream is still usable
            assert ok.ok
            await a.call(
                "submit_report",
                {
                    "root_cause_service": "x",
                    "root_cause_location": "y",
                    "category": "code_bug",
                    "remediation": "code_fix",
                    "summary": "a report filed far too early",
                },
            )
            with pytest.raises(EpisodeOverError):
                await a.call("get_alerts")
        with pytest.raises(ClientError) as missing:
            await client.get_grade("no-such-session")
        assert missing.value.code == "NOT_FOUND" and missing.value.reason


@pytest.mark.parametrize("scenario", scenario_ids())
async def test_the_expert_solves_every_scenario_over_the_wire(server, scenario):
    def play() -> dict:
        with SyncClient(server.address) as client:
            session = client.create_session(scenario, seed=1, seats=["expert"])
            agent = client.agent(session.id, session.tokens["expert"])
            ExpertPolicy().play(WireCaller(agent), agent.observation)
            agent.close()
            return client.get_grade(session.id)

    grade = await asyncio.to_thread(play)
    assert grade["grade"]["total"] >= 0.9, grade


async def test_closing_a_connection_frees_the_seat_at_once(server):
    # A close is a hang-up in order, not a drop: nobody waits out the grace period for it.
    async with MetasreClient(server.address) as client:
        session = await client.create_session(PAY, seed=0, seats=["a"])
        for _ in range(3):
            a = client.agent(session.id, session.tokens["a"])
            await a.join()  # SEAT_TAKEN here if the last close had been taken for a drop
            await a.call("get_alerts")
            await a.close()
            seat = server.registry.get(session.id)[0].seat("a")
            assert seat.holder is None and not seat.kept
