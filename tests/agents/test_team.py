"""The scripted team over the wire: three seats, real messages, the expert's grade."""

import asyncio

import pytest

from metasre.agents import ClientError
from metasre.agents.sync import SyncClient
from metasre.agents.team_session import play_team_session, team_seats
from metasre.simulator import scenario_ids

PAY = "meta-sre/payment-bad-deploy-v1"


def play(address: str, scenario: str, seed: int) -> tuple[dict, list]:
    with SyncClient(address) as client:
        run = play_team_session(client, scenario, seed)
        return client.get_grade(run.session_id), list(run.messages)


@pytest.mark.parametrize("scenario", scenario_ids())
async def test_the_team_solves_every_scenario_by_talking(server, scenario):
    grade, messages = await asyncio.to_thread(play, server.address, scenario, 2)
    assert grade["grade"]["total"] >= 0.9, grade
    senders = {m["from_agent_id"] for m in messages}
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
