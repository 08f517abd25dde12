"""The scripted team over the wire: three seats, real messages, the expert's grade."""

import asyncio
import json

import pytest

from metasre.agents import ClientError
from metasre.agents.policies.team import brief
from metasre.agents.sync import SyncClient
from metasre.agents.team_session import play_team_session, team_seats
from metasre.simulator import resolve, scenario_ids

PAY = "meta-sre/payment-bad-deploy-v2"


def play(address: str, scenario: str, seed: int) -> tuple[dict, list]:
    with SyncClient(address) as client:
        run = play_team_session(client, scenario, seed)
        return client.get_grade(run.session_id), list(run.messages)


@pytest.mark.parametrize("scenario", scenario_ids())
async def test_the_team_solves_every_scenario_by_talking(server, scenario):
    grade, messages = await asyncio.to_thread(play, server.address, scenario, 2)
    assert grade["grade"]["total"] >= 0.9, grade
    senders = {m["from_agent_id"] for m in messages}
    roles = resolve(scenario).spec(2).roles
    if roles:  # a team family: a seat per declared role, findings passed in LEAD/FIXED lines
        assert senders == {r.name for r in roles}
        assert any("\nFIXED {" in m["text"] for m in messages)
    else:
        assert senders == {"commander", "investigator", "fixer"}
        assert any(m["text"].startswith("Root cause:") for m in messages)


async def test_only_the_commander_may_file_the_report(server):
    def refused_report() -> str:
        with SyncClient(server.address) as client:
            tools = [t["name"] for t in client.list_tools()]
            session = client.create_session(PAY, seed=0, seats=team_seats(tools))
            fixer = client.agent(session.id, session.tokens["fixer"])
            try:
                fixer.call(
                    "submit_report",
                    {
                        "root_cause_service": "payment-service",
                        "root_cause_location": "x",
                        "category": "bad_deployment",
                        "remediation": "rollback_deployment",
                        "summary": "the fixer tries to file the report itself",
                    },
                )
            except ClientError as exc:
                return exc.code
            finally:
                fixer.close()
            return "OK"

    assert await asyncio.to_thread(refused_report) == "FAILED_PRECONDITION"


def play_under(address: str, scenario: str, seed: int, policy: str) -> tuple[dict, list]:
    with SyncClient(address) as client:
        run = play_team_session(client, scenario, seed, turn_policy=policy)
        return client.get_grade(run.session_id), client.get_trajectory(run.session_id)


@pytest.mark.parametrize("policy", ["ROUND_ROBIN", "SIMULTANEOUS"])
@pytest.mark.parametrize(
    "scenario", ["ad-ranking-crash", "payment-bad-deploy", "migration-cascade"]
)
async def test_the_team_takes_turns_and_waiting_roles_read_instead_of_stalling(
    server, scenario, policy
):
    grade, log = await asyncio.to_thread(play_under, server.address, scenario, 1, policy)
    assert grade["grade"]["total"] >= 0.9, grade
    calls = [e["applied"] for e in log if "applied" in e]
    # The first turn of each seat is used: the investigator and the fixer, who wait for a
    # teammate, read the paged services meanwhile instead of letting the turn time out.
    first = {}
    for c in calls:
        first.setdefault(c["agent_id"], c["tool"])
    assert first == {
        "commander": "send_message",
        "investigator": "read_logs",
        "fixer": "describe_service",
    }
    if policy == "SIMULTANEOUS":
        round_one = calls[:3]
        assert {c["agent_id"] for c in round_one} == {"commander", "investigator", "fixer"}
        # a round costs its longest call, not the sum
        assert round_one[-1]["clock"] == max(c["minutes"] for c in round_one)
    # what a seat read while waiting is not read again by the same seat
    looks = [
        (c["agent_id"], c["tool"], json.dumps(c["args"], sort_keys=True))
        for c in calls
        if c["tool"] in ("read_logs", "describe_service")
    ]
    assert len(looks) == len(set(looks))


@pytest.mark.parametrize(
    ("scenario", "seed"), [("consumer-lag", 0), ("tls-cert-expiry", 0), ("feature-flag-rollout", 7)]
)
async def test_a_diagnosis_with_long_repeated_evidence_still_reaches_the_fixer(
    server, scenario, seed
):
    # Their logs repeat long lines: all twenty of them would not fit in one message (4000
    # characters), and a refused DIAGNOSIS left the fixer and the commander waiting.
    grade, messages = await asyncio.to_thread(play, server.address, scenario, seed)
    assert grade["grade"]["resolved"], grade
    diagnosis = next(m for m in messages if m["text"].startswith("Root cause:"))
    assert len(diagnosis["text"]) <= 4000


def test_brief_keeps_the_newest_distinct_lines_within_its_budget():
    lines = ["a" * 250] * 15 + ["b" * 400, "c" * 10, "a" * 250]
    kept = brief(lines, budget=600)
    assert kept == ["b" * 300, "c" * 10, "a" * 250]
    assert brief(["x"] * 30) == ["x"]
