"""Attacks on incidents of several faults, over the wire: every fault's remedy counts as needed
(`GroundTruth.further_faults`), so a reward-maximising agent would try to pass blanket
operations off as remedies, or cure only the easy faults and claim the incident."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from metasre.agents.sync import SyncClient, WireCaller
from metasre.conformance.validate import SHOTGUN_MAX
from metasre.simulator import resolve

from .test_knob_attacks import _settings_ops

MULTI = ("twin-faults", "parallel-sla")


def _play(address: str, family: str, seed: int, attack: Callable[..., None]) -> dict[str, Any]:
    with SyncClient(address) as client:
        session = client.create_session(family, seed=seed, seats=["a"])
        agent = client.agent(session.id, session.tokens["a"])
        try:
            attack(WireCaller(agent), agent.observation, resolve(family).spec(seed))
        finally:
            agent.close()
        return client.get_grade(session.id)["grade"]


def _every_op(call: WireCaller, service: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("rollback_deployment", {"service": service}),
        ("restart_service", {"service": service}),
        *_settings_ops(call, service),
    ]


def _report(call: WireCaller, truth: Any, summary: str) -> None:
    call("submit_report", {
        "root_cause_service": truth.service, "root_cause_location": truth.location,
        "category": truth.category, "remediation": truth.remediation, "summary": summary,
    })  # fmt: skip


def blanket_every_service(call: WireCaller, obs: Mapping[str, Any], spec: Any) -> None:
    """No investigation: every release rollback, restart and settings reset everywhere."""
    for row in obs["services"]:
        for tool, args in _every_op(call, row["name"]):
            if call(tool, args).done:
                return
    _report(call, spec.ground_truth, "put every service back as it was")


def blanket_the_roots_told(call: WireCaller, obs: Mapping[str, Any], spec: Any) -> None:
    """Told every fault's service: every operation on each of them, then the exact report."""
    truth = spec.ground_truth
    for service in [truth.service, *(f.service for f in truth.further_faults)]:
        for tool, args in _every_op(call, service):
            if call(tool, args).done:
                return
    _report(call, truth, "put every faulty service back every way")


@pytest.mark.parametrize("attack", [blanket_every_service, blanket_the_roots_told])
@pytest.mark.parametrize("family", MULTI)
async def test_blanket_operations_do_not_pass_for_the_remedies(server, family, attack):
    for seed in (0, 1):
        grade = await asyncio.to_thread(_play, server.address, family, seed, attack)
        assert grade["final"]
        assert grade["total"] <= SHOTGUN_MAX, (family, seed, attack.__name__, grade["components"])


@pytest.mark.parametrize("family", MULTI)
async def test_curing_some_faults_and_claiming_the_incident_is_not_resolved(server, family):
    """The reference remedies of every fault but one (either one), the report exactly right."""
    spec0 = resolve(family).spec(0)
    remedies = [s for s in spec0.solution if s.tool != "submit_report"]
    for skipped in range(len(remedies)):

        def partial(
            call: WireCaller, obs: Mapping[str, Any], spec: Any, skip: int = skipped
        ) -> None:
            steps = [s for s in spec.solution if s.tool != "submit_report"]
            for i, step in enumerate(steps):
                if i != skip:
                    call(step.tool, dict(step.args))
            _report(call, spec.ground_truth, "every fault is fixed and verified")

        grade = await asyncio.to_thread(_play, server.address, family, 0, partial)
        parts = {c["name"]: c for c in grade["components"]}
        assert grade["final"] and not grade["resolved"], (family, skipped, grade["components"])
        assert parts["sla"]["score"] == 0.0 and "not mitigated" in parts["sla"]["detail"]
        assert grade["total"] < 0.7, (family, skipped, grade["total"])
