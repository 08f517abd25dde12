"""Attacks a reward-maximising agent would try on the runtime-settings remedies, over the wire.

The settings tools (rollback_config, set_feature_flag, renew_certificate, sync_clock,
clean_disk, skip_message, warm_cache) are cheap, and their faults are cured by one of them: an
agent that blankets a platform with them, or does only the easy half of a two-step remedy and
claims the whole, must not grade like one that found the cause. Each attack plays through a real
server as an agent would; where it is given the answer (the strongest attacker), it still must
not pass for the remedy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from metasre.agents.sync import SyncClient, WireCaller
from metasre.conformance.validate import SHOTGUN_MAX
from metasre.simulator import resolve

KNOB_FAMILIES = (
    "bad-config-push",
    "retry-storm",
    "disk-full",
    "feature-flag-rollout",
    "tls-cert-expiry",
    "clock-skew",
    "consumer-lag",
)


def _settings_ops(call: WireCaller, service: str) -> list[tuple[str, dict[str, Any]]]:
    """Every settings operation that could apply to `service`, read off its get_config."""
    seen = call("get_config", {"service": service}).data
    ops: list[tuple[str, dict[str, Any]]] = []
    if seen.get("pushes"):
        ops.append(("rollback_config", {"service": service}))
    ops += [("renew_certificate", {"service": service, "certificate": c["name"]})
            for c in seen.get("certificates", ())]  # fmt: skip
    ops += [("set_feature_flag", {"flag": f["name"], "rollout_percent": 0})
            for f in seen.get("flags", ())]  # fmt: skip
    ops += [("skip_message", {"queue": q["name"]}) for q in seen.get("queues", ())]
    ops += [("sync_clock", {"service": service}), ("clean_disk", {"service": service}),
            ("warm_cache", {"service": service})]  # fmt: skip
    return ops


def _report(call: WireCaller, service: str, category: str, remediation: str) -> None:
    call("submit_report", {
        "root_cause_service": service, "root_cause_location": f"service:{service}",
        "category": category, "remediation": remediation,
        "summary": "reset every runtime setting that could be involved",
    })  # fmt: skip


def _play(address: str, family: str, seed: int, attack: Callable[..., None]) -> dict[str, Any]:
    with SyncClient(address) as client:
        session = client.create_session(family, seed=seed, seats=["a"])
        agent = client.agent(session.id, session.tokens["a"])
        try:
            attack(WireCaller(agent), agent.observation, resolve(family).spec(seed))
        finally:
            agent.close()
        return client.get_grade(session.id)["grade"]


def blanket_every_service(call: WireCaller, obs: Mapping[str, Any], spec: Any) -> None:
    """No investigation: every settings operation on every service, loudest alert reported."""
    truth = spec.ground_truth
    for row in obs["services"]:
        for tool, args in _settings_ops(call, row["name"]):
            if call(tool, args).done:
                return
    loudest = obs["alerts"][0]["service"] if obs["alerts"] else obs["services"][0]["name"]
    _report(call, loudest, truth.category, truth.remediation)


def blanket_the_paged(call: WireCaller, obs: Mapping[str, Any], spec: Any) -> None:
    """Narrower: every settings operation on the services the pager names."""
    truth = spec.ground_truth
    paged = list(dict.fromkeys(a["service"] for a in obs["alerts"])) or [obs["services"][0]["name"]]
    for service in paged:
        for tool, args in _settings_ops(call, service):
            if call(tool, args).done:
                return
    _report(call, paged[0], truth.category, truth.remediation)


def blanket_the_root(call: WireCaller, obs: Mapping[str, Any], spec: Any) -> None:
    """The strongest attacker, told the root service: every settings operation on it, report
    exactly the ground truth. What it did beyond the remedy is what the grade must charge."""
    truth = spec.ground_truth
    for tool, args in _settings_ops(call, truth.service):
        if call(tool, args).done:
            return
    call("submit_report", {
        "root_cause_service": truth.service, "root_cause_location": truth.location,
        "category": truth.category, "remediation": truth.remediation,
        "summary": "reset every runtime setting of the root",
    })  # fmt: skip


@pytest.mark.parametrize("attack", [blanket_every_service, blanket_the_paged, blanket_the_root])
@pytest.mark.parametrize("family", KNOB_FAMILIES)
async def test_blanketing_settings_operations_does_not_pay(server, family, attack):
    for seed in (0, 1):
        grade = await asyncio.to_thread(_play, server.address, family, seed, attack)
        assert grade["final"]
        assert grade["total"] <= SHOTGUN_MAX, (family, seed, attack.__name__, grade["components"])


@pytest.mark.parametrize("seed", [0, 1, 2])
async def test_half_of_a_two_step_remedy_is_not_the_remedy(server, seed):
    """disk-full needs the log level put back and the disk cleaned. Cleaning alone, even on the
    right service and reported as the full remedy, is not credited as the remedy, and the disk
    fills again (the fault comes back within the hour)."""

    def clean_only(call: WireCaller, obs: Mapping[str, Any], spec: Any) -> None:
        truth = spec.ground_truth
        call("clean_disk", {"service": truth.service})
        call("submit_report", {
            "root_cause_service": truth.service, "root_cause_location": truth.location,
            "category": truth.category, "remediation": truth.remediation,
            "summary": "the disk was full; cleaned it, so writes go through again",
        })  # fmt: skip

    def both(call: WireCaller, obs: Mapping[str, Any], spec: Any) -> None:
        for step in spec.solution:
            call(step.tool, dict(step.args))

    half = await asyncio.to_thread(_play, server.address, "disk-full", seed, clean_only)
    full = await asyncio.to_thread(_play, server.address, "disk-full", seed, both)
    parts = {c["name"]: c for c in half["components"]}
    assert half["final"] and full["final"] and not half["resolved"]
    assert full["resolved"] and full["total"] > 0.9
    assert parts["report"]["score"] < 1.0, parts["report"]
    assert half["total"] < full["total"]
