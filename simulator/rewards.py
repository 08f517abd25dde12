"""Dense per-call reward shaping, each component named and credited to the calling agent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from metasre.simulator.report import normalize_location
from metasre.simulator.scenarios.spec import GroundTruth

STEP_COST = -0.005
FAULT_CURED = 0.2
FAULT_RETURNED = -0.2
SYNTAX_ERROR = -0.05
OPERATION = -0.02
"""Every operation, needed or not, at once: the price says nothing about the answer. Whether
it was needed is settled in the grade, at the end (see UNNEEDED_OPERATION)."""
UNNEEDED_OPERATION = -0.35
"""Grade cost of each operation the incident did not need: in production a needless rollback,
restart or migration rollback is an outage or a data risk, and over-provisioning a bill. No
cap: two of them take a right answer below 0.3."""
OVER_PROVISION_FACTOR = 2
"""Scaling past this many times the replicas the incident needs (plus one) is a bill, not a
remedy."""
HINT_PRICES = (0.05, 0.25, 0.25)
"""What each hint costs, by what it reveals: a general direction, the root service, its
location. Further hints repeat the last and cost HINT_REPEAT_PRICE. All three: -0.55."""
HINT_REPEAT_PRICE = 0.05
WORLD_ERROR = -0.01

_OPERATIONS = frozenset(
    {"rollback_deployment", "rollback_migration", "restart_service", "scale_service"}
)


def hint_price(number: int) -> float:
    """The price of the `number`-th hint of an episode (1 for the first)."""
    return HINT_PRICES[number - 1] if number <= len(HINT_PRICES) else HINT_REPEAT_PRICE


@dataclass(frozen=True, slots=True)
class RewardUpdate:
    """The reward one call earned its agent, by component."""

    agent_id: str
    tick: int
    components: Mapping[str, float]
    total: float


@dataclass(frozen=True, slots=True)
class CallFacts:
    """What happened in one call, as far as shaping cares."""

    tool: str
    args: Mapping[str, Any]
    ok: bool
    data: Mapping[str, Any]
    cured: int
    """Faults this call cured."""
    returned: int
    """Faults this call brought back after they had been cured."""


@dataclass(slots=True)
class Shaper:
    """Turns each call into reward components, credited to the calling agent.

    Nothing here depends on what the agent cannot observe: looking at the right service or
    file pays nothing (it would tell every seat the answer mid-episode), and an operation costs
    the same whether or not it was the remedy. What the world itself shows is paid at once: a
    fault cured (its signals recover for everyone to see) or brought back. Whether each
    operation was needed is recorded for the grade.
    """

    truth: GroundTruth
    required_replicas: int | None = None
    """Replicas the root service needs, when its remedy is a scale-up."""
    unneeded_operations: list[str] = field(default_factory=list)
    """Operations the incident did not need, for the grade's cost."""
    remedied: bool = False
    """The remedy operation was applied once already."""
    hints: int = 0

    def components(self, facts: CallFacts) -> dict[str, float]:
        """Reward components for one call."""
        out: dict[str, float] = {"step_cost": STEP_COST}
        if not facts.ok:
            out["world_error"] = WORLD_ERROR
            return out
        tool, args = facts.tool, facts.args
        if facts.cured:
            out["fault_cured"] = FAULT_CURED * facts.cured
        if facts.returned:
            out["fault_returned"] = FAULT_RETURNED * facts.returned
        if tool == "edit_lines" and facts.data.get("syntax_error"):
            out["syntax_error"] = SYNTAX_ERROR
        if tool == "ask_hint":
            self.hints += 1
            out["hint"] = -hint_price(self.hints)
        if tool in _OPERATIONS:
            out["operation"] = OPERATION
            unneeded = self._unneeded(tool, args)
            if unneeded is not None:
                self.unneeded_operations.append(unneeded)
        return out

    def _unneeded(self, tool: str, args: Mapping[str, Any]) -> str | None:
        """Why an operation was not needed, or None when it was the incident's remedy."""
        truth = self.truth
        service = args.get("service")
        if tool != truth.remediation or service != truth.service:
            return f"{tool} on {service}: not the remedy of this incident"
        if tool == "rollback_migration":
            wanted = normalize_location(truth.location).partition(":")[2]
            if args.get("migration") != wanted:
                return f"rolled back migration {args.get('migration')}, which was not the bad one"
        if tool == "scale_service" and self.required_replicas is not None:
            ceiling = OVER_PROVISION_FACTOR * self.required_replicas + 1
            if int(args.get("replicas") or 0) > ceiling:
                return (
                    f"scaled {service} to {args.get('replicas')} replicas, more than"
                    f" {ceiling}: over-provisioned"
                )
        if self.remedied:
            return f"{tool} on {service} again: the remedy was already applied"
        self.remedied = True
        return None
