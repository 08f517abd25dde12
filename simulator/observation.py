"""What an on-call engineer sees when paged, refreshed after every tool call."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class AlertView:
    """A firing alert as the pager shows it."""

    id: str
    service: str
    severity: str
    summary: str
    firing_minutes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceRow:
    """One dashboard row."""

    name: str
    health: str
    error_rate: float
    p99_ms: float
    cpu: float
    memory: float
    queue_depth: float
    version: str
    replicas: int
    recent_deploy: str | None
    """The release shipped in the last hour, with its age, if any."""
    depends_on: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Observation:
    """The incident at a glance: pager, budgets, alerts, dashboard, graph, terminal."""

    scenario_id: str
    title: str
    severity: str
    description: str
    minute: float
    """Simulated minutes since the page."""
    sla_minutes_left: float
    steps_left: int
    step_budget: int
    phase: str
    alerts: tuple[AlertView, ...]
    services: tuple[ServiceRow, ...]
    terminal: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready)."""
        return asdict(self)

    def render(self) -> str:
        """Compact text for an LLM's context."""
        out = [
            # no scenario id: the agent is not told which instance it plays (views, wire)
            f"[{self.severity}] {self.title}",
            self.description.strip(),
            f"t+{self.minute:.1f} min | SLA left {self.sla_minutes_left:.1f} min | "
            f"steps left {self.steps_left}/{self.step_budget} | {self.phase}",
            "ALERTS:" if self.alerts else "ALERTS: none",
        ]
        out += [
            f"  [{a.severity}] {a.service}: {a.summary} ({a.firing_minutes} min)"
            for a in self.alerts
        ]
        out.append("SERVICES: name health err p99 cpu mem queue version replicas deps")
        for s in self.services:
            deploy = f" deployed {s.recent_deploy}" if s.recent_deploy else ""
            out.append(
                f"  {s.name} {s.health} {s.error_rate:.1%} {s.p99_ms:.0f}ms {s.cpu:.0%} "
                f"{s.memory:.0%} {s.queue_depth:.0f} {s.version} x{s.replicas}{deploy}"
                f" -> {', '.join(s.depends_on) or '-'}"
            )
        if self.terminal:
            out.append("TERMINAL:")
            out += [f"  {line}" for line in self.terminal]
        return "\n".join(out)


StreakMemory = tuple[tuple[int, int | None] | None, ...]
"""What alert rules remember of their streaks (`alerts.AlertRules.memory`)."""


@dataclass(slots=True)
class Opening:
    """What every episode of one scenario instance shows before anything changes.

    The world, the faults and the clock are the same at the start of each episode of a
    scenario and seed, so the first episode to get there fills this in and the others read
    it. Two threads that fill it at once write the same values.
    """

    board: tuple[tuple[AlertView, ...], tuple[ServiceRow, ...], StreakMemory] | None = None
    """The pager's alerts and the dashboard rows at minute 0, and the alert rules' memory
    after finding them: when each streak began reads far back, so it is done once."""
    observation: Observation | None = None
    """The observation before the first call."""
