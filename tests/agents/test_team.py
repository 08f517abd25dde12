"""The scripted team over the wire: three seats, real messages, the expert's grade."""

import asyncio

import pytest

from metasre.agents.sync import SyncClient
from metasre.agents.team_session import play_team_session, team_seats
from metasre.simulator import scenario_ids


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


def test_only_the_commander_may_file_the_report():
    seats = dict((s[0], s) for s in team_seats(["read_logs", "submit_report"]))
    assert len(seats["commander"]) == 2  # no restriction
    assert seats["fixer"][2] == ["read_logs"] and seats["investigator"][2] == ["read_logs"]
