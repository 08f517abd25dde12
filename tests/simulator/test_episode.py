"""The episode's contract: observation, in-world errors, budgets, rewards and determinism."""

import pytest

from metasre.simulator import Episode, EpisodeOverError, EpisodePhase, InvalidToolCallError

AD = "meta-sre/ad-ranking-crash-v2"
PAY = "meta-sre/payment-bad-deploy-v2"


AD_SEED = 11
"""The seed whose structure is the family's classic: ad_ranking/ranker.py reads a feature row
(a dict) as an object and raises AttributeError; the tests below rely on that structure."""


@pytest.fixture
def ad() -> Episode:
    ep = Episode.make(AD, AD_SEED)
    assert ep.instance.values["fault"]["key"] == "ranker-quality-attr", "the family changed"
    return ep


def test_reset_shares_the_base_tree_and_starts_with_an_empty_overlay(ad):
    assert ad.workspace.base is ad.instance.tree
    assert ad.workspace.changed_files() == {}
    assert Episode.make(AD, AD_SEED).instance.tree is ad.instance.tree


def test_observation_is_what_on_call_sees_when_paged(ad):
    obs = ad.observation()
    assert obs.severity == "P1" and obs.title and obs.description
    assert obs.steps_left == obs.step_budget == ad.instance.spec.step_budget
    assert obs.sla_minutes_left == ad.instance.spec.sla_minutes
    assert any(a.service == "ad_ranking" for a in obs.alerts)
    rows = {s.name: s for s in obs.services}
    assert rows["ad_ranking"].health != "healthy"
    assert rows["ad_ranking"].recent_deploy is not None
    text = obs.render()
    assert "ALERTS:" in text and "ad_ranking" in text and "SERVICES:" in text


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("view_file", {"path": "ad_ranking/nope.py"}, "file_not_found"),
        ("view_file", {"path": "../../etc/passwd"}, "path_outside_tree"),
        ("view_file", {"path": "hidden/probes.py"}, "file_not_found"),
        (
            "edit_lines",
            {"path": "tests/unit/test_ad_ranking.py", "action": "delete", "start_line": 1},
            "read_only",
        ),
        ("view_file", {"path": "ad_ranking/ranker.py", "start_line": 9999}, "bad_line_range"),
        ("read_logs", {"service": "ad-ranking"}, "unknown_service"),
        (
            "rollback_deployment",
            {"service": "ad_ranking", "to_version": "v0.0.1"},
            "operation_refused",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_wrong_calls_inside_the_world_are_readable_results_that_cost_a_step(ad, tool, args, code):
    result = ad.apply("a", tool, args)
    assert not result.ok and result.output.error == code
    assert result.output.text.startswith("error: ")
    assert result.tick == 1 and result.reward.components["world_error"] < 0


def test_unknown_service_lists_the_real_ones(ad):
    result = ad.apply("a", "read_logs", {"service": "ad-ranking"})
    assert "ad_ranking" in result.output.data["services"]


def test_hidden_checks_are_not_in_the_tree(ad):
    listing = ad.apply("a", "list_files", {"path": ""}).output.data["entries"]
    assert not any(e.startswith("hidden") for e in listing)
    assert all(not p.startswith("hidden/") for p in ad.workspace.walk())


def test_schema_violations_are_refused_before_the_world_sees_them(ad):
    with pytest.raises(InvalidToolCallError):
        ad.apply("a", "query_metrics", {"service": "ad_ranking", "metric": "vibes"})
    with pytest.raises(InvalidToolCallError):
        ad.apply("a", "no_such_tool", {})
    assert ad.tick == 0 and ad.clock == 0.0


def test_the_clock_advances_by_each_tools_cost_and_metrics_cover_the_window(ad):
    ad.apply("a", "get_alerts", {})
    result = ad.apply(
        "a",
        "query_metrics",
        {"service": "ad_ranking", "metric": "error_rate", "window_minutes": 20},
    )
    assert result.clock == pytest.approx(0.7)
    points = result.output.data["points"]
    assert len(points) == 20 and points[-1]["minute"] == 0
    assert points[0]["value"] < points[-1]["value"]  # the fault started inside the window


def test_logs_carry_the_faults_stack_trace(ad):
    lines = ad.apply("a", "read_logs", {"service": "ad_ranking", "level": "ERROR"}).output.text
    assert "AttributeError" in lines and "ad_ranking/ranker.py" in lines


def test_fixing_the_cause_recovers_the_service_over_the_following_minutes():
    ep = Episode.make(PAY, 0)
    bad = ep.world.services["payment-service"].version
    result = ep.apply("fixer", "rollback_deployment", {"service": "payment-service"})
    assert result.reward.components["fault_cured"] > 0
    assert ep.world.services["payment-service"].version != bad
    before = ep.telemetry.value("payment-service", "error_rate", ep.minute)
    later = ep.telemetry.value("payment-service", "error_rate", ep.minute + 6)
    assert before > 0.3 and later < 0.05
    assert ep.telemetry.signals("api-gateway", ep.minute + 6).health == "healthy"


def test_acting_on_a_symptom_does_not_cure_and_costs_in_the_grade():
    ep = Episode.make(PAY, 0)
    result = ep.apply("a", "restart_service", {"service": "api-gateway"})
    assert "fault_cured" not in result.reward.components
    # at once, only the flat price every operation pays: nothing says it was the wrong one
    assert result.reward.components["operation"] < 0
    assert ep.telemetry.signals("api-gateway", ep.minute + 10).health != "healthy"
    assert ep.grade().component("unneeded_operations").value == pytest.approx(-0.35)


def test_rewards_are_credited_to_the_agent_whose_call_earned_them():
    ep = Episode.make(PAY, 0)
    look = ep.apply("investigator", "read_logs", {"service": "payment-service"})
    fix = ep.apply("fixer", "rollback_deployment", {"service": "payment-service"})
    assert look.reward.agent_id == "investigator"
    assert fix.reward.agent_id == "fixer" and fix.reward.components["fault_cured"] > 0
    assert ep.apply("x", "ask_hint", {}).reward.components["hint"] < 0


def test_a_report_ends_the_episode_for_everyone_with_a_final_grade(ad):
    result = ad.apply(
        "a",
        "submit_report",
        {
            "root_cause_service": "ad_ranking",
            "root_cause_location": "ad_ranking/ranker.py",
            "category": "code_bug",
            "remediation": "code_fix",
            "summary": "ranker reads a dict as an object",
        },
    )
    assert result.phase is EpisodePhase.TERMINATED and result.grade is not None
    assert result.grade.final and not result.grade.resolved
    assert result.reward.components["grade"] == result.grade.total
    # A right diagnosis without a fix earns half of its credit, and no more than 0.2 overall.
    assert result.grade.total <= 0.2
    with pytest.raises(EpisodeOverError, match="terminated"):
        ad.apply("b", "get_alerts", {})


def test_the_step_budget_truncates(ad):
    budget = ad.instance.spec.step_budget
    for _ in range(budget - 1):
        assert not ad.apply("a", "get_alerts", {}).done
    last = ad.apply("a", "get_alerts", {})
    assert last.phase is EpisodePhase.TRUNCATED and last.grade is not None
    assert last.grade.component("root_cause").score == 0


def test_edits_are_commits_by_the_agent_and_show_in_blame_and_diff(ad):
    line = ad.workspace.find_line("ad_ranking/ranker.py", "features.")
    ad.apply(
        "fixer-7",
        "edit_lines",
        {
            "path": "ad_ranking/ranker.py",
            "action": "insert",
            "start_line": line,
            "content": "    # investigating",
        },
    )
    blame = ad.apply(
        "fixer-7",
        "git_blame",
        {"path": "ad_ranking/ranker.py", "start_line": line, "end_line": line + 1},
    )
    owners = [b["author"] for b in blame.output.data["lines"]]
    assert owners[0] == "fixer-7" and owners[1] != "fixer-7"
    diff = ad.apply("fixer-7", "git_diff", {}).output.text
    assert "+    # investigating" in diff


def test_a_syntax_error_is_penalised_and_reported(ad):
    result = ad.apply(
        "a",
        "edit_lines",
        {
            "path": "ad_ranking/ranker.py",
            "action": "insert",
            "start_line": 1,
            "content": "def broken(:",
        },
    )
    assert result.output.data["syntax_error"].startswith("SyntaxError")
    assert result.reward.components["syntax_error"] < 0
    tests = ad.apply("a", "run_tests", {"suite": "unit"}).output
    assert tests.data["ok"] is False


def _trace(scenario: str, seed: int) -> list[tuple]:
    from metasre.agents.policies import ExpertPolicy
    from metasre.conformance import EpisodeCaller

    ep = Episode.make(scenario, seed)
    log: list[tuple] = []

    class Recording(EpisodeCaller):
        def __call__(self, tool, args):
            reply = super().__call__(tool, args)
            log.append(
                (
                    tool,
                    dict(args),
                    reply.ok,
                    reply.text,
                    self.episode.clock,
                    repr(sorted(reply.data.items())),
                )
            )
            return reply

    ExpertPolicy().play(Recording(ep), ep.observation().to_dict())
    log.append(("grade", ep.grade()))
    log.append(("obs", ep.observation()))
    return log


@pytest.mark.parametrize("scenario", [AD, PAY])
def test_the_same_episode_twice_gives_identical_results_rewards_and_grade(scenario):
    first = _trace(scenario, 11)
    assert first == _trace(scenario, 11)
    assert first != _trace(scenario, 12)


def test_two_agents_in_one_episode_share_one_world_and_see_each_others_messages():
    ep = Episode.make(PAY, 1)
    ep.apply("commander", "send_message", {"text": "check payment-service", "to": ["investigator"]})
    ep.apply("investigator", "read_logs", {"service": "payment-service"})
    assert ep.messages == ((1, "commander", ("investigator",), "check payment-service"),)
    assert ep.tick == 2


def test_a_round_of_simultaneous_calls_lasts_as_long_as_its_longest_call():
    serial = Episode.make(PAY, 0)
    serial.apply("a", "run_tests", {"suite": "unit"})
    serial.apply("b", "get_alerts", {})
    parallel = Episode.make(PAY, 0)
    parallel.begin_round()
    parallel.apply("a", "run_tests", {"suite": "unit"})
    parallel.apply("b", "get_alerts", {})
    parallel.end_round()
    assert serial.clock == pytest.approx(1.2)
    assert parallel.clock == pytest.approx(1.0)
    parallel.apply("a", "get_alerts", {})
    assert parallel.clock == pytest.approx(1.2)


def test_rolling_back_a_code_bug_mitigates_but_only_the_code_fix_resolves(ad):
    result = ad.apply("a", "rollback_deployment", {"service": "ad_ranking"})
    assert result.reward.components["fault_cured"] > 0
    grade = ad.grade()
    # the mitigation that hides a code bug is not its remedy: the grade counts it unneeded
    assert grade.component("unneeded_operations").value == pytest.approx(-0.35)
    assert grade.component("sla").score == 1.0
    assert not grade.resolved
    code_checks = {k: v for k, v in grade.fail_to_pass.items() if not k.startswith("state::")}
    assert code_checks and not any(code_checks.values())
