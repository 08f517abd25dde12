"""Dense per-call reward shaping, each component named and credited to the calling agent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from metasre.simulator.report import normalize_location
from metasre.simulator.scenarios.spec import GroundTruth

STEP_COST = -0.005
ROOT_SERVICE_SEEN = 0.02
ROOT_LOCATION_SEEN = 0.03
FAULT_CURED = 0.2
FAULT_RETURNED = -0.2
SYNTAX_ERROR = -0.05
WRONG_ROLLBACK = -0.1
INNOCENT_TARGET = -0.05
HINT = -0.05
WORLD_ERROR = -0.01

_SERVICE_LOOKS = frozenset({"read_logs", "query_metrics", "describe_service", "check_dependencies"})
_LOCATION_LOOKS = frozenset({"view_file", "git_blame", "git_log", "describe_service"})


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
    """Turns each call into reward components; team-wide firsts are credited once."""

    truth: GroundTruth
    root_files: frozenset[str]
    """The ground-truth files (for code faults), normalised."""
    seen: set[str] = field(default_factory=set)
    wrong_operations: list[str] = field(default_factory=list)
    """Operations on the wrong target, for the grader's penalty."""

    def components(self, facts: CallFacts) -> dict[str, float]:
        """Reward components for one call."""
        out: dict[str, float] = {"step_cost": STEP_COST}
        if not facts.ok:
            out["world_error"] = WORLD_ERROR
            return out
        tool, args = facts.tool, facts.args
        service = args.get("service")
        if tool in _SERVICE_LOOKS and service == self.truth.service:
            self._first("root_service_seen", ROOT_SERVICE_SEEN, out)
        path = args.get("path")
        if tool in _LOCATION_LOOKS and (
            (isinstance(path, str) and normalize_location(path) in self.root_files)
            or (
                tool == "describe_service" and service == self.truth.service and not self.root_files
            )
        ):
            self._first("root_location_seen", ROOT_LOCATION_SEEN, out)
        if facts.cured:
            out["fault_cured"] = FAULT_CURED * facts.cured
        if facts.returned:
            out["fault_returned"] = FAULT_RETURNED * facts.returned
        if tool == "edit_lines" and facts.data.get("syntax_error"):
            out["syntax_error"] = SYNTAX_ERROR
        # No reward for a visible suite turning green: its result is what the agent's own code
        # says about itself (DESIGN section 7); a real fix is paid through fault_cured, which
        # the hidden checks judge on the trusted side.
        if tool == "ask_hint":
            out["hint"] = HINT
        wrong = self._wrong_operation(tool, args)
        if wrong is not None:
            self.wrong_operations.append(wrong)
            key = "wrong_rollback" if tool.startswith("rollback") else "innocent_target"
            out[key] = WRONG_ROLLBACK if key == "wrong_rollback" else INNOCENT_TARGET
        return out

    def _first(self, name: str, value: float, out: dict[str, float]) -> None:
        if name not in self.seen:
            self.seen.add(name)
            out[name] = value

    def _wrong_operation(self, tool: str, args: Mapping[str, Any]) -> str | None:
        truth = self.truth
        service = args.get("service")
        if tool == "rollback_deployment":
            # Rolling back the root service mitigates even a code bug; anything else is wrong.
            if service != truth.service:
                return f"rolled back {service}, which was not the bad release"
        elif tool == "rollback_migration":
            wanted = normalize_location(truth.location).partition(":")[2]
            if truth.remediation != "rollback_migration" or args.get("migration") != wanted:
                return f"rolled back migration {args.get('migration')}, which was not the bad one"
        elif tool in ("restart_service", "scale_service") and service != truth.service:
            return f"{tool} on {service}, which was not the root cause"
        return None
