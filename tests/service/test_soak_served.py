"""Fixes must hold, over the wire: a client sees the soak in the grade's components (what held,
what relapsed and at which minute), and a mitigation that leaves the cause in place, however
exact the report that follows it, is not resolved."""

from __future__ import annotations

import asyncio
from typing import Any

from metasre.agents.sync import SyncClient
from metasre.simulator import resolve


def _play(address: str, family: str, seed: int, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    with SyncClient(address) as client:
        session = client.create_session(family, seed=seed, seats=["a"])
        agent = client.agent(session.id, session.tokens["a"])
        try:
            for tool, args in calls:
                agent.call(tool, args)
        finally:
            agent.close()
        grade = client.get_grade(session.id)["grade"]
    return grade, {c["name"]: c for c in grade["components"]}


async def test_the_soak_shows_a_cleaned_disk_filling_again_and_the_fix_holding(server):
    spec = resolve("disk-full").spec(0)
    root = spec.ground_truth.service
    report = spec.solution[-1]
    clean_only = [("clean_disk", {"service": root}), (report.tool, dict(report.args))]
    grade, parts = await asyncio.to_thread(_play, server.address, "disk-full", 0, clean_only)
    assert grade["final"] and not grade["resolved"]
    assert parts["sla"]["score"] == 0.0 and "came back at t+" in parts["sla"]["detail"]
    assert "relapsed: disk on " + root in parts["soak"]["detail"]
    assert parts["fix"]["score"] == 0.0 and parts["soak"]["value"] == 0.0

    reference = [(s.tool, dict(s.args)) for s in spec.solution]
    grade, parts = await asyncio.to_thread(_play, server.address, "disk-full", 0, reference)
    assert grade["resolved"] and grade["total"] == 1.0
    assert parts["soak"]["detail"].startswith("every fault stayed cured")
    assert "75 min after settling" in parts["soak"]["detail"]


async def test_a_rollback_that_hides_a_code_bug_is_not_resolved_over_the_wire(server):
    spec = resolve("ad-ranking-crash").spec(1)
    report = spec.solution[-1]
    calls = [
        ("rollback_deployment", {"service": spec.ground_truth.service}),
        (report.tool, dict(report.args)),
    ]
    grade, parts = await asyncio.to_thread(_play, server.address, "ad-ranking-crash", 1, calls)
    assert grade["final"] and not grade["resolved"]
    assert parts["sla"]["detail"].startswith("mitigated at")  # held through the soak
    assert parts["fix"]["score"] == 0.0
    assert "hidden by a rollback" in parts["soak"]["detail"]


async def test_a_comment_edit_behind_a_rollback_claimed_as_the_code_fix_earns_no_cure(server):
    """The rollback mitigates, the comment on the buggy line makes the root 'changed', the
    report is exactly right: still no fix, no resolution and the remediation not done."""
    spec = resolve("ad-ranking-crash").spec(2)
    truth, report = spec.ground_truth, spec.solution[-1]
    assert truth.lines is not None
    calls = [
        ("rollback_deployment", {"service": truth.service}),
        ("edit_lines", {"path": truth.location, "action": "insert",
                        "start_line": truth.lines[0], "content": "# fixed: handle the new rows"}),
        (report.tool, dict(report.args)),
    ]  # fmt: skip
    grade, parts = await asyncio.to_thread(_play, server.address, "ad-ranking-crash", 2, calls)
    assert grade["final"] and not grade["resolved"]
    assert parts["fix"]["score"] == 0.0 and parts["efficiency"]["score"] == 0.0
    assert parts["report"]["detail"].endswith("remediation claimed but not done")
    assert "cause left in place" in parts["soak"]["detail"]
