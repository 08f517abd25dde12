"""Rollouts: planning, the runner over a real server, and `metasre rollout` as a subprocess."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from metasre.agents.policies import RandomPolicy
from metasre.agents.rollout import (
    EpisodeResult,
    RolloutReport,
    plan_episodes,
    run_rollout,
    solo_player,
    summarise,
)
from metasre.agents.sync import SyncClient
from metasre.cli.rollout import print_table, resolve_scenarios
from metasre.simulator import scenario_ids


def metasre(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_a_rollout_of_three_expert_episodes_per_family_grades_every_one_and_reports_it():
    families = scenario_ids()
    n = 3 * len(families)
    out = metasre("rollout", "--episodes", str(n), "--parallel", "8", "--json", "--no-store")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["episodes"] == n and report["agent"] == "expert" and report["parallel"] == 8
    assert all(r["graded"] and not r["error"] for r in report["results"])
    rows = {s["scenario_id"]: s for s in report["scenarios"]}
    assert set(rows) == set(families)
    for row in rows.values():
        assert row["episodes"] == row["graded"] == 3
        assert row["success_rate"] == 1.0 and row["grade_mean"] >= 0.9
        assert row["grade_stdev"] >= 0 and row["steps_mean"] > 0 and row["minutes_mean"] > 0
        assert row["wall_seconds"] > 0 and row["episodes_per_second"] > 0
    total = report["total"]
    assert total["episodes"] == n and total["episodes_per_second"] > 0
    # Three seeds per family, the first three.
    seeds = {r["seed"] for r in report["results"]}
    assert seeds == set(range(3))


def test_the_table_names_every_scenario_and_the_total(capsys):
    rows = [
        EpisodeResult(i, sid, 0, f"s{i}", True, i % 2 == 0, 0.5 + 0.1 * i, 5, 3.0, 0.1, 0.1 * i)
        for i, sid in enumerate(["meta-sre/a-v1", "meta-sre/a-v1", "meta-sre/b-v1"])
    ]
    summaries = [summarise("meta-sre/a-v1", rows[:2]), summarise("meta-sre/b-v1", rows[2:])]
    report = RolloutReport("expert", 2, 0.5, rows, [*summaries, summarise("TOTAL", rows, 0.5)])
    print_table(report)
    table = capsys.readouterr().out
    assert "meta-sre/a-v1" in table and "meta-sre/b-v1" in table and "TOTAL" in table
    assert "0.550 ± 0.050" in table  # scenario a: grades 0.5 and 0.6
    assert "6.0" in table  # TOTAL episodes per second: 3 in 0.5 s


async def test_the_random_baseline_over_the_wire_is_graded_and_fails(server):
    plan = plan_episodes(["meta-sre/payment-bad-deploy-v2", "meta-sre/ad-ranking-crash-v2"], [0, 1])

    def run() -> RolloutReport:
        with SyncClient(server.address) as client:
            tools = client.list_tools()
            random = solo_player(lambda seed: RandomPolicy(seed, tools))
            return run_rollout(client, random, plan, parallel=4, agent="random")

    report = await asyncio.to_thread(run)
    assert [r.index for r in report.results] == [0, 1, 2, 3]
    assert all(r.graded for r in report.results), [r.error for r in report.results]
    assert report.total.success_rate == 0.0 and report.total.grade_mean < 0.5
    assert [s.scenario_id for s in report.summaries] == [
        "meta-sre/payment-bad-deploy-v2",
        "meta-sre/ad-ranking-crash-v2",
        "TOTAL",
    ]


async def test_a_failing_episode_is_a_row_with_its_error_not_a_crash(server):
    plan = plan_episodes(["meta-sre/no-such-scenario-v1"], [0])

    def run() -> RolloutReport:
        with SyncClient(server.address) as client:
            tools = client.list_tools()
            return run_rollout(
                client, solo_player(lambda seed: RandomPolicy(seed, tools)), plan, parallel=1
            )

    (result,) = (await asyncio.to_thread(run)).results
    assert not result.graded and "NOT_FOUND" in result.error


def test_plans_cover_every_scenario_before_repeating_a_seed():
    plan = plan_episodes(["a", "b", "c"], [7, 8], episodes=4)
    assert [(p.scenario_id, p.seed) for p in plan] == [("a", 7), ("a", 8), ("b", 7), ("c", 7)]
    assert [p.index for p in plan] == [0, 1, 2, 3]
    assert len(plan_episodes(["a"], [0, 1], episodes=5)) == 5  # cycles
    assert len(plan_episodes(["a", "b"], [0, 1, 2])) == 6  # one per pair by default
    with pytest.raises(ValueError):
        plan_episodes([], [0])


def test_scenarios_resolve_by_id_name_or_all():
    offered = ["meta-sre/payment-bad-deploy-v2", "meta-sre/ad-ranking-crash-v2"]
    assert resolve_scenarios(None, offered) == offered
    assert resolve_scenarios(["all"], offered) == offered
    assert resolve_scenarios(["ad-ranking-crash", offered[0]], offered) == offered[::-1]
    assert resolve_scenarios(["payment-bad-deploy-v2"], offered) == offered[:1]
    with pytest.raises(LookupError, match="did you mean payment-bad-deploy"):
        resolve_scenarios(["payment-bad-deplo"], offered)


def test_the_command_refuses_bad_input_with_exit_code_2():
    out = metasre("rollout", "--scenario", "payment-bad-deplo", "--episodes", "1", "--no-store")
    assert out.returncode == 2 and "payment-bad-deploy" in out.stderr
    out = metasre("rollout", "--seeds", "9-2")
    assert out.returncode == 2 and "a range goes up" in out.stderr


async def test_the_team_rolls_out_with_three_seats_per_episode(server):
    from metasre.agents.team_session import team_player

    plan = plan_episodes(["meta-sre/payment-bad-deploy-v2", "meta-sre/user-service-oom-v2"], [3])

    def run() -> RolloutReport:
        with SyncClient(server.address) as client:
            player = team_player()
            return run_rollout(client, player, plan, parallel=2, agent="team")

    report = await asyncio.to_thread(run)
    assert all(r.graded for r in report.results), [r.error for r in report.results]
    assert report.total.success_rate == 1.0 and report.total.grade_mean >= 0.9
