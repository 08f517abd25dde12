"""The scripted team over the wire: three seats, real messages, the expert's grade."""

import asyncio

import pytest

from metasre.agents.policies.team import ROLES, play_team
from metasre.agents.sync import SyncClient, WireCaller
from metasre.simulator import scenario_ids

ALL_BUT_REPORT = [
    "view_file",
    "list_files",
    "edit_lines",
    "read_logs",
    "query_metrics",
    "get_alerts",
    "check_dependencies",
    "describe_service",
    "run_tests",
    "git_log",
    "git_show",
    "git_blame",
    "git_diff",
    "rollback_migration",
    "rollback_deployment",
    "restart_service",
    "scale_service",
    "ask_hint",
    "send_message",
]


def play(address: str, scenario: str, seed: int) -> tuple[dict, list[dict]]:
    with SyncClient(address) as client:
        # Only the commander may file the report: the role permissions are enforced server-side.
        seats = [
            ("commander", "commander"),
            ("investigator", "investigator", ALL_BUT_REPORT),
            ("fixer", "fixer", ALL_BUT_REPORT),
        ]
        session = client.create_session(scenario, seed=seed, seats=seats)
        agents = {role: client.agent(session.id, session.tokens[role]) for role in ROLES}
        play_team(
            {r: WireCaller(a) for r, a in agents.items()},
            agents["commander"].observation,
            {r: r for r in ROLES},
        )
        messages = [m for a in agents.values() for m in a.messages()]
        for a in agents.values():
            a.close()
        return client.get_grade(session.id), messages


@pytest.mark.parametrize("scenario", scenario_ids())
async def test_the_team_solves_every_scenario_by_talking(server, scenario):
    grade, messages = await asyncio.to_thread(play, server.address, scenario, 2)
    assert grade["grade"]["total"] >= 0.9, grade
    senders = {m["from_agent_id"] for m in messages}
    assert senders == {"commander", "investigator", "fixer"}
    assert any(m["text"].startswith("Root cause:") for m in messages)
