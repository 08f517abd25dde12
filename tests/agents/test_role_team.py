"""The scripted team of a scenario's roles, through a real server: each seat within its view.

A team family declares roles whose views split the evidence; the team seats one agent per role
(the server applies the role's view), and what one seat learns reaches another only in a
message. The solo expert restricted to one role's view is the baseline the team must beat.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from metasre.agents.plain import to_dict
from metasre.agents.policies import ExpertPolicy
from metasre.agents.policies.team import KINDS, RoleSeat, SeatView
from metasre.agents.rollout import EpisodeSpec
from metasre.agents.sync import SyncClient, WireCaller
from metasre.agents.team_session import (
    pick_role,
    play_team_session,
    role_player,
    scenario_roles,
)
from metasre.service.wire.convert import tool_pb
from metasre.simulator import TOOLS, resolve
from metasre.simulator.views import View

SPLIT = "meta-sre/split-evidence-v2"
SCHEMA = "meta-sre/schema-release-v2"


def _notes(messages: list[dict[str, Any]]) -> list[tuple[str, list[str], str, dict[str, Any]]]:
    """(sender, recipients, kind, body) of every structured line of the messages."""
    out = []
    for m in messages:
        for line in str(m["text"]).splitlines():
            kind, _, body = line.partition(" ")
            if kind in KINDS:
                out.append((m["from_agent_id"], list(m["to"]), kind, json.loads(body)))
    return out


def play(address: str, scenario: str, seed: int, policy: str) -> dict[str, Any]:
    with SyncClient(address) as client:
        run = play_team_session(client, scenario, seed, turn_policy=policy)
        events = client.get_trajectory(run.session_id)
        return {
            "grade": client.get_grade(run.session_id)["grade"],
            "calls": [e["applied"] for e in events if "applied" in e],
            "messages": [e["message"] for e in events if "message" in e],
        }


@pytest.mark.parametrize(("scenario", "seed"), [(SPLIT, 0), (SPLIT, 7), (SCHEMA, 0), (SCHEMA, 3)])
@pytest.mark.parametrize("policy", ["SIMULTANEOUS", "FREE_FOR_ALL"])
async def test_a_seat_hands_what_it_sees_to_the_seat_that_can_act_on_it(
    server, scenario, seed, policy
):
    spec = resolve(scenario).spec(seed)
    views = {r.name: r.view for r in spec.roles}
    root = spec.ground_truth.service
    out = await asyncio.to_thread(play, server.address, scenario, seed, policy)
    assert out["grade"]["resolved"] and out["grade"]["total"] >= 0.9, out["grade"]
    # one seat per role, and every call of a seat stayed within its view
    seats = {c["agent_id"] for c in out["calls"]}
    assert seats == set(views)
    for c in out["calls"]:
        service = c["args"].get("service")
        assert service is None or views[c["agent_id"]].sees(service), c
    # the remedy was applied by a seat that sees the root cause, and that seat learned of it
    # from a teammate who sees the failing callers but not the root
    (fixer,) = {c["agent_id"] for c in out["calls"] if c["tool"].startswith("rollback_")}
    assert views[fixer].sees(root)
    leads = [
        (sender, body)
        for sender, to, kind, body in _notes(out["messages"])
        if kind == "LEAD" and body["service"] == root and fixer in to
    ]
    assert leads, out["messages"]
    sender, body = leads[0]
    assert sender != fixer and not views[sender].sees(root)
    assert views[sender].sees(body["blamed_by"]) and not views[fixer].sees(body["blamed_by"])


def play_solo(address: str, scenario: str, seed: int, role: str) -> dict[str, Any]:
    with SyncClient(address) as client:
        played = role_player(lambda seed: ExpertPolicy(), role)(
            client, EpisodeSpec(0, scenario, seed)
        )
        return client.get_grade(played.session_id)["grade"]


@pytest.mark.parametrize("scenario", [SPLIT, SCHEMA])
async def test_the_solo_expert_in_either_role_s_seat_cannot_solve_it_alone(server, scenario):
    for role in ("1", "2"):
        grade = await asyncio.to_thread(play_solo, server.address, scenario, 0, role)
        assert not grade["resolved"] and grade["total"] < 0.5, (role, grade)


def roles_of(address: str, scenario: str) -> tuple[RoleSeat, ...]:
    with SyncClient(address) as client:
        return scenario_roles(client, scenario)


async def test_the_team_takes_the_roles_the_scenario_declares(server):
    roles = await asyncio.to_thread(roles_of, server.address, "split-evidence")
    spec = resolve(SPLIT).spec(0)
    assert [r.name for r in roles] == [r.name for r in spec.roles]
    assert [r.view for r in roles] == [
        SeatView(r.view.services, r.view.code, r.view.data, r.view.deploys) for r in spec.roles
    ]
    assert pick_role(roles, "2") is roles[1]
    assert pick_role(roles, roles[0].name) is roles[0]
    with pytest.raises(LookupError, match="no role 'janitor'"):
        pick_role(roles, "janitor")
    assert await asyncio.to_thread(roles_of, server.address, "meta-sre/payment-bad-deploy-v2") == ()


@pytest.mark.parametrize(
    "view",
    [
        View(),
        View(services=("orders", "storefront"), data=False),
        View(code=False, deploys=False),
        View(services=("catalog-db",), code=False, data=True, deploys=False),
    ],
)
def test_a_seat_describes_its_view_as_the_simulator_does(view):
    seat = SeatView.of(
        {
            "services": list(view.services or ()),
            "hide_code": not view.code,
            "hide_data": not view.data,
            "hide_deploys": not view.deploys,
        }
    )
    assert seat.describe() == view.describe()
    assert SeatView.of({**view.model_dump(), "services": view.services}) == seat


SERVED = {t.name: to_dict(tool_pb(t)) for t in TOOLS.values()}
"""The server's tools by name, as ListTools serves them."""


def test_a_seat_can_fix_only_what_its_view_and_tools_reach():
    dba = RoleSeat("dba", SeatView(("orders-db",), code=False, deploys=False))
    assert dba.can_fix("orders-db", "bad_migration", SERVED)
    assert not dba.can_fix("orders-db", "bad_deployment", SERVED)  # the deploy system is hidden
    assert not dba.can_fix("orders", "bad_migration", SERVED)  # not its service
    assert not dba.can_fix("orders-db", "code_bug", SERVED)
    restarts_only = RoleSeat("ops", SeatView(), tools=("restart_service", "read_logs"))
    assert restarts_only.can_fix("orders", "crash_loop", SERVED)
    assert not restarts_only.can_fix("orders", "capacity", SERVED)


def sla_of(grade: dict[str, Any]) -> tuple[bool, str]:
    sla = next(c for c in grade["components"] if c["name"] == "sla")
    return sla["score"] == 1.0, sla["detail"]


def play_expert(address: str, scenario: str, seed: int) -> dict[str, Any]:
    with SyncClient(address) as client:
        session = client.create_session(scenario, seed=seed, seats=["expert"])
        agent = client.agent(session.id, session.tokens["expert"])
        try:
            ExpertPolicy().play(WireCaller(agent), agent.observation)
        finally:
            agent.close()
        return client.get_grade(session.id)["grade"]


@pytest.mark.parametrize("seed", [0, 1, 2])
async def test_in_simultaneous_rounds_the_team_meets_an_sla_the_solo_expert_misses(server, seed):
    scenario = "meta-sre/parallel-sla-v2"
    solo = await asyncio.to_thread(play_expert, server.address, scenario, seed)
    met, detail = sla_of(solo)
    assert solo["resolved"] and not met, detail  # the expert fixes it all, one fault at a time
    out = await asyncio.to_thread(play, server.address, scenario, seed, "SIMULTANEOUS")
    met, detail = sla_of(out["grade"])
    assert out["grade"]["resolved"] and met, detail
    # the faults were remedied by different seats, side by side in the same rounds
    remedies = [c for c in out["calls"] if c["tool"] in REMEDIES]
    assert len({c["agent_id"] for c in remedies}) == len(remedies) >= 2
    spec = resolve(scenario).spec(seed)
    assert len(remedies) == 1 + len(spec.ground_truth.further_faults)
    assert out["grade"]["total"] >= 0.9
    # the report names the primary fault (the page's first alert), the others as further faults
    report = next(c for c in out["calls"] if c["tool"] == "submit_report")
    assert report["args"]["root_cause_service"] == spec.ground_truth.service


REMEDIES = {
    "rollback_deployment",
    "rollback_migration",
    "restart_service",
    "scale_service",
    "renew_certificate",
    "warm_cache",
    "rollback_config",
    "set_config",
    "set_feature_flag",
    "sync_clock",
    "clean_disk",
    "skip_message",
    "edit_lines",
}


ROLE_GRID = """
name = "roles"
families = ["split-evidence", "schema-release"]
seeds = "0-1"
turn_policies = ["SIMULTANEOUS"]
parallel = 4

[[teams]]
name = "team"
agents = "team"

[[teams]]
name = "full view"
agents = "expert"

[[teams]]
name = "first role"
agents = "expert@1"

[[teams]]
name = "second role"
agents = "expert@2"
"""


def experiment(tmp_path: Path, grid: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    path, out_file = tmp_path / "grid.toml", tmp_path / "results.json"
    path.write_text(grid)
    out = subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", "experiment", str(path), "--out",
         str(out_file), "--no-store", "--no-progress"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    return out, json.loads(out_file.read_text()) if out_file.exists() else {}


def test_an_experiment_compares_the_team_with_the_expert_in_one_role_s_seat(tmp_path):
    out, results = experiment(tmp_path, ROLE_GRID)
    assert out.returncode == 0, out.stdout + out.stderr
    cells = {c["team"]: c for c in results["configurations"]}
    for name in ("team", "full view"):
        assert cells[name]["figures"]["resolved"]["mean"] == 1.0, name
    for name, seats in (
        ("first role", {"app-oncall"}),
        ("second role", {"release-manager", "dba"}),
    ):
        assert cells[name]["figures"]["resolved"]["mean"] == 0.0, name
        # one seat, the role's (the same name in both families, or each family's own)
        assert set(cells[name]["credit"]) == seats
    assert set(cells["team"]["credit"]) == {"app-oncall", "release-manager", "dba"}
    # family by family too, on stdout and in the file
    by_family = cells["team"]["by_family"]
    assert set(by_family) == {SPLIT, SCHEMA}
    assert all(f["sla_met"]["seeds"] == 2 for f in by_family.values())
    assert "per family: SLA met | grade | resolved | mitigated (min)" in out.stdout
    assert "split-evidence-v2" in out.stdout


def test_a_role_the_family_does_not_declare_fails_its_episodes_and_says_which(tmp_path):
    grid = ROLE_GRID.replace('agents = "expert@2"', 'agents = "expert@janitor"')
    out, results = experiment(tmp_path, grid.replace('"0-1"', '"0"'))
    assert out.returncode == 1, out.stdout + out.stderr
    cell = next(c for c in results["configurations"] if c["team"] == "second role")
    assert cell["failed"] == 2
    assert all("no role 'janitor'" in r["error"] for r in cell["episodes_detail"])
