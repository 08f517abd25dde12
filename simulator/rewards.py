"""Dense per-call reward shaping, each component named and credited to the calling agent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .report import normalize_location
from .scenarios.spec import FurtherFault, GroundTruth, remedy_steps

if TYPE_CHECKING:  # the tools import their prices from here
    from .tools.base import Operation, ToolOutput

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


def hint_price(number: int) -> float:
    """The price of the `number`-th hint of an episode (1 for the first)."""
    return HINT_PRICES[number - 1] if number <= len(HINT_PRICES) else HINT_REPEAT_PRICE


@dataclass(frozen=True, slots=True, kw_only=True)
class RewardUpdate:
    """The reward one call earned its agent, by component."""

    agent_id: str
    tick: int
    components: Mapping[str, float]
    total: float
    others: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Shaping this call earned other agents: a fault brought back by one agent's change and
    cured by another's call repays the one who broke it (see Shaper)."""


@dataclass(frozen=True, slots=True)
class CallFacts:
    """What happened in one call, as far as shaping cares."""

    tool: str
    output: ToolOutput
    """What the call returned: whether it worked, and its effects (an operation has a price,
    a hint its cost, a file left broken its charge)."""
    cured: tuple[int, ...]
    """Faults (by index) this call cured."""
    returned: tuple[int, ...]
    """Faults (by index) this call brought back after they had been cured."""
    agent_id: str = ""
    """Whose call it was."""
    read_only: bool = False
    """The tool changes nothing (tools.base.Tool.read_only): a fault that comes back on a
    call that changed the world came back because of it, not with time."""
    relapsed: tuple[int, ...] = ()
    """Faults (by index) the world showed cured whose cure, judged when the episode ended,
    did not hold (code that served the production traffic but fails the hidden checks):
    charged to whoever cured them, so such a cure nets zero."""


@dataclass(slots=True)
class Shaper:
    """Turns each call into reward components, credited to the agents that earned them.

    Nothing here depends on what the agent cannot observe: looking at the right service or
    file pays nothing (it would tell every seat the answer mid-episode), and an operation costs
    the same whether or not it was the remedy. What the world itself shows is paid at once: a
    fault cured (its signals recover for everyone to see) or brought back. Whether each
    operation was needed is recorded for the grade.

    Faults are shaped by a potential, FAULT_CURED per fault cured, paid as it changes, with a
    ledger so that no seat gains from a cycle of states:

    - an agent whose change brings a cured fault back pays FAULT_RETURNED and owes it; whoever
      then cures it, the cure repays the debtor (``fault_repaired``), not the curer. Breaking
      and fixing, by one seat or two, nets zero to each;
    - a fault that comes back with time (a restart that only bought minutes), on a call that
      changed nothing, is charged to whoever cured it last: their cure did not hold;
    - any other cure pays its caller. The team's total is always the potential's change.
    """

    truth: GroundTruth
    required_replicas: int | None = None
    """Replicas the root service needs, when its remedy is a scale-up."""
    unneeded_operations: list[str] = field(default_factory=list)
    """Operations the incident did not need, for the grade's cost."""
    remedied: set[tuple[int, int]] = field(default_factory=set)
    """(fault, step) of the remedies' steps (spec.remedy_steps) applied once already; fault 0
    is the primary, then `GroundTruth.further_faults` in order."""
    hints: int = 0
    """Hints asked so far: the one count the hint tool, the prices and the grade read."""
    debts: dict[int, str] = field(default_factory=dict)
    """Fault index -> the agent whose change brought it back, owed its next cure."""
    cured_by: dict[int, str] = field(default_factory=dict)
    """Fault index -> the agent credited with its last cure."""

    def components(self, facts: CallFacts) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
        """Reward components for one call: the caller's, and other agents' by agent id."""
        out: dict[str, float] = {"step_cost": STEP_COST}
        others: dict[str, dict[str, float]] = {}
        self._faults(facts, out, others)
        output = facts.output
        if not output.ok:
            out["world_error"] = WORLD_ERROR
            return out, others
        if output.syntax_error:
            out["syntax_error"] = SYNTAX_ERROR
        if output.hint:
            self.hints += 1
            out["hint"] = -hint_price(self.hints)
        if output.operation is not None:
            out["operation"] = OPERATION
            unneeded = self._unneeded(facts.tool, output.operation)
            if unneeded is not None:
                self.unneeded_operations.append(unneeded)
        return out, others

    def _faults(
        self, facts: CallFacts, out: dict[str, float], others: dict[str, dict[str, float]]
    ) -> None:
        caller = facts.agent_id

        def pay(agent: str, name: str, value: float) -> None:
            into = out if agent == caller else others.setdefault(agent, {})
            into[name] = round(into.get(name, 0.0) + value, 9)

        for index in facts.returned:
            if not facts.read_only or index not in self.cured_by:
                pay(caller, "fault_returned", FAULT_RETURNED)
                self.debts[index] = caller
            else:
                pay(self.cured_by[index], "fault_relapsed", FAULT_RETURNED)
        for index in facts.relapsed:
            if index in self.cured_by:
                pay(self.cured_by.pop(index), "fault_relapsed", FAULT_RETURNED)
        for index in facts.cured:
            debtor = self.debts.pop(index, None)
            if debtor is not None and debtor != caller:
                pay(debtor, "fault_repaired", FAULT_CURED)
            else:
                pay(caller, "fault_cured", FAULT_CURED)
            self.cured_by[index] = debtor or caller

    def _unneeded(self, tool: str, op: Operation) -> str | None:
        """Why an operation was not needed, or None when it was a remedy the incident needs.

        An incident of several faults (`GroundTruth.further_faults`) needs each one's remedy;
        the reason given for an operation that is none of them is the primary fault's.
        """
        truth = self.truth
        why = self._unneeded_for(0, truth, self.required_replicas, tool, op)
        for index, further in enumerate(truth.further_faults, start=1):
            if why is None:
                break
            if self._unneeded_for(index, further, None, tool, op) is None:
                why = None
        return why

    def _unneeded_for(
        self,
        fault: int,
        truth: GroundTruth | FurtherFault,
        required_replicas: int | None,
        tool: str,
        op: Operation,
    ) -> str | None:
        """Why an operation was not the remedy of one fault (0: the primary), or None.

        The remedy is named by its tool (the report's `remediation` vocabulary); a remedy of
        several steps (spec.remedy_steps) needs one operation of each.
        """
        service = op.service
        step = next(
            (i for i, tools in enumerate(remedy_steps(truth.remediation)) if tool in tools), None
        )
        if step is None or service != truth.service:
            what = f" ({op.knob})" if op.knob else ""
            return f"{tool}{what} on {service}: not the remedy of this incident"
        if op.migration is not None:
            wanted = normalize_location(truth.location).partition(":")[2]
            if op.migration != wanted:
                return f"rolled back migration {op.migration}, which was not the bad one"
        if op.knob is not None:
            # A location naming a knob of the same kind ('config:<key>', 'flag:<name>') names
            # the one knob whose change is the remedy.
            wanted = truth.location.strip()
            if wanted.partition(":")[0] == op.knob.partition(":")[0] and op.knob != wanted:
                return f"{tool} changed {op.knob} on {service}, which was not the bad one"
        if op.replicas is not None and required_replicas is not None:
            ceiling = OVER_PROVISION_FACTOR * required_replicas + 1
            if op.replicas > ceiling:
                return (
                    f"scaled {service} to {op.replicas} replicas, more than"
                    f" {ceiling}: over-provisioned"
                )
        if (fault, step) in self.remedied:
            return f"{tool} on {service} again: the remedy was already applied"
        self.remedied.add((fault, step))
        return None
