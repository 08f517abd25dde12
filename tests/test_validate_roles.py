"""`metasre validate` on team families: the expert seated alone in any one role's view must not
resolve the incident, and the full-view expert's SLA record is reported."""

from __future__ import annotations

from metasre.conformance import EpisodeCaller
from metasre.conformance.validate import validate_scenario
from metasre.simulator import Episode, resolve
from metasre.simulator.views import View


def test_a_team_family_is_checked_role_by_role():
    verdict = validate_scenario("meta-sre/split-evidence-v2", [0, 1], 0)
    assert verdict.ok, verdict.failures
    roles = [r.name for r in resolve("meta-sre/split-evidence-v2").spec(0).roles]
    assert sorted(verdict.alone) == sorted(roles)
    assert verdict.alone_best == 0.0
    assert verdict.expert_sla_met == [True, True]
    assert verdict.to_dict()["alone_resolved"] == dict.fromkeys(roles, 0.0)


def test_a_family_without_roles_has_no_role_figures():
    verdict = validate_scenario("meta-sre/ad-ranking-crash-v2", [0], 0)
    assert verdict.alone == {} and verdict.alone_best is None


def test_the_in_process_caller_enforces_a_view_as_the_server_does():
    episode = Episode.make("meta-sre/payment-bad-deploy-v2", 0)
    root = episode.instance.spec.ground_truth.service
    caller = EpisodeCaller(episode, "a", View(services=("api-gateway",), deploys=False))
    refused = caller("read_logs", {"service": root})
    assert not refused.ok and refused.error == "OUTSIDE_VIEW" and episode.tick == 0
    assert not caller("rollback_deployment", {"service": "api-gateway"}).ok
    assert caller("get_alerts", {}).ok and episode.tick == 1
    assert [s["name"] for s in caller.observation()["services"]] == ["api-gateway"]
