"""The scripted expert solves each knob incident from the evidence vocabulary alone.

The logs below are written the way simulator/scenarios/README.md ("Evidence vocabulary") asks
family authors to write them; the expert knows no answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from knob_world import knob_episode
from test_knobs import CASES

from metasre.agents.policies import ExpertPolicy, ToolReply
from metasre.agents.policies.evidence import categorise
from metasre.simulator import Episode, EpisodeOverError

LOGS = {
    "bad_config": ["invalid config value http.timeout_ms=5: upstream postgres timed out"],
    "retry_storm": ["retry storm: attempt 9 of 12 calling postgres failed, retrying"],
    "feature_flag": ["feature flag new_checkout: KeyError 'basket' in the new checkout flow"],
    "expired_certificate": [
        "x509: certificate has expired or is not yet valid: payments.internal (client-to-payments)"
    ],
    "clock_skew": ["JWT rejected: token not yet valid, clock offset -95s from NTP"],
    "disk_full": ["write /var/log/checkout/app.log: no space left on device"],
    "consumer_lag": ["poison message msg-4411 failed 14 times; orders consumer stuck"],
    "cache_stampede": ["cache stampede: 97% misses, every request goes to postgres"],
}


class Caller:
    """A ToolCaller over an episode, as the in-process validate plays the expert."""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self.tools: list[str] = []

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        self.tools.append(tool)
        try:
            step = self.episode.apply("expert", tool, args)
        except EpisodeOverError as exc:
            return ToolReply(False, str(exc), {}, True, "episode_over")
        return ToolReply(step.ok, step.output.text, step.output.data, step.done, step.output.error)


def play(tmp_path, name: str, **platform: Any) -> tuple[Episode, ExpertPolicy, Caller]:
    case = CASES[name]
    own = {"name": "knob healthy", "kind": "knob_ok", "service": "checkout", **case["fault"]}
    ep = knob_episode(
        tmp_path,
        fault=case["fault"],
        truth=case["truth"],
        state_checks=[*case.get("checks", []), own],
        logs=LOGS[name],
        **{**case["platform"], **platform},
    )
    expert, caller = ExpertPolicy(), Caller(ep)
    expert.play(caller, ep.observation().to_dict())
    return ep, expert, caller


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_expert_diagnoses_and_remedies_each_knob_incident(tmp_path, name):
    ep, expert, caller = play(tmp_path, name)
    assert expert.diagnosis is not None
    assert expert.diagnosis.category == name
    grade = ep.grade()
    assert grade.final and grade.resolved, (caller.tools, grade.components)
    assert grade.total >= 0.9, grade.components
    assert "unneeded_operations" not in {c.name for c in grade.components}, caller.tools


def test_the_evidence_words_do_not_steal_older_diagnoses():
    older = {
        "AttributeError: 'dict' object has no attribute 'score'": "code_bug",
        "connection pool exhausted: 20 of 20 connections in use": "resource_leak",
        "insert or update violates foreign key constraint": "bad_migration",
        "OOMKilled: memory limit 512Mi": "capacity",
        "Back-off restarting failed container: CrashLoopBackOff": "crash_loop",
        "feature store cache hit ratio 0.64 since the last rollout (cold cache, warming up)": None,
        "DEBUG replication lag 0 bytes": None,
        "event timestamp out of the attribution window": "data_corruption",
    }
    for line, category in older.items():
        assert categorise([line])[0] == category, line


def test_consumer_lag_without_a_poison_message_scales_the_consumer(tmp_path):
    case = CASES["consumer_lag"]
    ep = knob_episode(
        tmp_path,
        fault={"knob": "queue:orders", "above": 500},
        truth={**case["truth"], "location": "service:checkout", "remediation": "scale_service"},
        state_checks=[{"name": "x", "kind": "healthy", "service": "checkout"}],
        logs=["consumer lag on orders: 900 messages behind, 3 consumers busy"],
        poison=False,
        queue_depth=900,
    )
    expert, caller = ExpertPolicy(), Caller(ep)
    expert.play(caller, ep.observation().to_dict())
    assert expert.diagnosis is not None and expert.diagnosis.remediation == "scale_service"
    assert "skip_message" not in caller.tools
