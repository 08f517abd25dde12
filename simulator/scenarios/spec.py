"""The validated shape of `scenario.toml` and `topology.toml`, as pydantic models."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Metric = Literal["cpu", "memory", "error_rate", "p99_ms", "queue_depth", "business"]
"""The telemetry signals every service reports each simulated minute."""

METRICS: tuple[Metric, ...] = ("cpu", "memory", "error_rate", "p99_ms", "queue_depth", "business")

Severity = Literal["P1", "P2", "P3", "P4"]
Category = Literal[
    "code_bug",
    "data_corruption",
    "resource_leak",
    "bad_migration",
    "security",
    "bad_deployment",
    "capacity",
    "crash_loop",
]
"""What kind of failure an incident is; the report's `category` field."""

CATEGORIES: tuple[Category, ...] = (
    "code_bug",
    "data_corruption",
    "resource_leak",
    "bad_migration",
    "security",
    "bad_deployment",
    "capacity",
    "crash_loop",
)

Remediation = Literal[
    "code_fix", "rollback_deployment", "rollback_migration", "restart_service", "scale_service"
]
"""What resolves an incident; the report's `remediation` field."""

REMEDIATIONS: tuple[Remediation, ...] = (
    "code_fix",
    "rollback_deployment",
    "rollback_migration",
    "restart_service",
    "scale_service",
)

FaultKind = Literal["code", "deployment", "migration", "capacity", "memory_leak", "crash_loop"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Baseline(_Strict):
    """A service's healthy signal levels, before noise and faults."""

    cpu: float = Field(0.3, ge=0, le=1)
    """Fraction of the CPU limit in use."""
    memory: float = Field(0.4, ge=0, le=1)
    """Fraction of the memory limit in use."""
    error_rate: float = Field(0.001, ge=0, le=1)
    """Fraction of requests that fail."""
    p99_ms: float = Field(100.0, ge=0)
    """99th percentile latency in milliseconds."""
    queue_depth: float = Field(2.0, ge=0)
    """Requests waiting for a worker."""
    business: float = Field(0.0, ge=0)
    """A business signal (conversions, orders) per minute; 0 when the service has none."""


class ServiceSpec(_Strict):
    """A service in the topology."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,62}$")
    """The service's name as agents type it."""
    code_dir: str | None = None
    """Folder of its source in the code tree; None for services without code (databases)."""
    depends_on: tuple[str, ...] = ()
    """Services this one calls; faults propagate from a dependency to its dependents."""
    version: str = "v1.0.0"
    """The release running at the incident's start (the last deployment overrides it)."""
    replicas: int = Field(2, ge=0, le=1000)
    """Instances running at the incident's start."""
    baseline: Baseline = Baseline()
    """Healthy signal levels."""
    logs: tuple[str, ...] = ()
    """Routine log templates; `{n}` and `{ratio}` are filled with plausible numbers."""


class DeploymentSpec(_Strict):
    """One release of a service, in the order they went out."""

    service: str
    version: str
    minutes_ago: float = Field(ge=0)
    commit: str | None = None
    """The history folder whose commit this release shipped, if any."""


class MigrationSpec(_Strict):
    """One applied database migration."""

    service: str
    id: str
    minutes_ago: float = Field(ge=0)
    file: str | None = None


class FaultLog(_Strict):
    """A block of log lines a faulty service emits each minute while the fault is strong."""

    service: str
    level: Literal["DEBUG", "INFO", "WARN", "ERROR", "FATAL"] = "ERROR"
    lines: tuple[str, ...]
    min_strength: float = Field(0.2, ge=0, le=1)
    """Below this strength the block is not emitted."""


class TerminalLine(_Strict):
    """A line of the shared terminal panel shown while the fault is active."""

    text: str


class FaultSpec(_Strict):
    """What is broken, how it shows, and what cures it."""

    kind: FaultKind
    service: str
    """The root-cause service."""
    onset_minutes_ago: float = Field(ge=0)
    ramp_minutes: float = Field(2.0, gt=0)
    recover_minutes: float = Field(4.0, gt=0)
    params: dict[str, Any] = {}
    effects: dict[str, dict[Metric, float]] = {}
    """Per service, per metric: what full strength adds to the baseline."""
    logs: tuple[FaultLog, ...] = ()
    terminal: tuple[TerminalLine, ...] = ()

    @model_validator(mode="after")
    def _params_for_kind(self) -> FaultSpec:
        needed = {
            "deployment": ("bad_version",),
            "migration": ("migration",),
            "capacity": ("required_replicas",),
            "memory_leak": ("required_replicas",),
        }.get(self.kind, ())
        missing = [p for p in needed if p not in self.params]
        if missing:
            raise ValueError(f"fault kind {self.kind!r} needs params {missing}")
        return self


class AlertRule(_Strict):
    """A threshold on one service's metric that pages when crossed."""

    service: str
    metric: Metric
    above: float | None = None
    below: float | None = None
    severity: Severity = "P2"
    summary: str

    @model_validator(mode="after")
    def _one_threshold(self) -> AlertRule:
        if (self.above is None) == (self.below is None):
            raise ValueError(f"alert {self.summary!r} needs exactly one of 'above' or 'below'")
        return self


class GroundTruth(_Strict):
    """The answer key: what a correct report says."""

    service: str
    location: str
    lines: tuple[int, int] | None = None
    category: Category
    remediation: Remediation
    symptom_services: tuple[str, ...] = ()
    red_herrings: tuple[str, ...] = ()
    summary: str = ""


class StateCheck(_Strict):
    """A hidden check on the world's state rather than its code."""

    name: str
    kind: Literal[
        "deployed_version", "healthy", "migration_applied", "migration_absent", "replicas_at_least"
    ]
    service: str
    version: str | None = None
    migration: str | None = None
    replicas: int | None = None


class HiddenSpec(_Strict):
    """The grader's checks, invisible to agents."""

    fail_to_pass: tuple[str, ...] = ()
    """Code check ids (`hidden/file.py::test_name`) that fail at the start and pass after a fix."""
    pass_to_pass: tuple[str, ...] = ()
    """Code check ids that pass at the start and must keep passing."""
    state_checks: tuple[StateCheck, ...] = ()
    """World-state checks; they count as FAIL_TO_PASS."""
    settle_minutes: float = Field(5.0, ge=0)
    """How long the world runs on, untouched, before the state checks are read."""


class ExpertSpec(_Strict):
    """Hints for the scenario's own tests about how it is proven."""

    suite: Literal["unit", "integration", "load", "security"] = "unit"


class SolutionStep(_Strict):
    """One tool call of the reference solution."""

    tool: str
    args: dict[str, Any] = {}


class ScenarioSpec(_Strict):
    """One incident, fully rendered for a seed."""

    id: str = Field(pattern=r"^[a-z0-9-]+/[a-z0-9-]+-v[0-9]+$")
    title: str
    severity: Severity
    difficulty: Literal["easy", "medium", "hard"]
    description: str
    sla_minutes: float = Field(gt=0)
    step_budget: int = Field(gt=0, le=1000)
    seed_varies: tuple[str, ...] = ()
    topology: str | None = None
    variables: dict[str, tuple[Any, ...]] = {}
    services: tuple[ServiceSpec, ...] = ()
    deployments: tuple[DeploymentSpec, ...] = ()
    migrations: tuple[MigrationSpec, ...] = ()
    faults: tuple[FaultSpec, ...] = Field(min_length=1)
    alerts: tuple[AlertRule, ...] = ()
    ground_truth: GroundTruth
    hidden: HiddenSpec
    expert: ExpertSpec = ExpertSpec()
    solution: tuple[SolutionStep, ...] = Field(min_length=1)
    """The reference solution."""
    wrong_fix: tuple[SolutionStep, ...] = ()
    """A plausible but wrong remedy (restart instead of scale, a symptom patched downstream);
    validate proves it leaves the incident unresolved and scores clearly below the solution."""

    @model_validator(mode="after")
    def _consistent(self) -> ScenarioSpec:
        names = {s.name for s in self.services}
        problems: list[str] = []

        def need(service: str, where: str) -> None:
            if service not in names:
                problems.append(f"{where} names unknown service {service!r}")

        for s in self.services:
            for dep in s.depends_on:
                need(dep, f"service {s.name!r} depends_on")
        for d in self.deployments:
            need(d.service, "a deployment")
        for m in self.migrations:
            need(m.service, "a migration")
        for f in self.faults:
            need(f.service, "a fault")
            for svc in f.effects:
                need(svc, f"fault effects of {f.service!r}")
            for log in f.logs:
                need(log.service, "a fault log")
        for a in self.alerts:
            need(a.service, "an alert")
        need(self.ground_truth.service, "ground_truth")
        for svc in (*self.ground_truth.symptom_services, *self.ground_truth.red_herrings):
            need(svc, "ground_truth")
        for c in self.hidden.state_checks:
            need(c.service, f"state check {c.name!r}")
        if not (self.hidden.fail_to_pass or self.hidden.state_checks):
            problems.append("hidden needs at least one fail_to_pass check or state check")
        # Imported here, not at the top: the tools read the metric names from this module.
        from metasre.simulator.tools.registry import TOOLS

        for name, steps in (("solution", self.solution), ("wrong_fix", self.wrong_fix)):
            unknown = sorted({s.tool for s in steps} - TOOLS.keys())
            if unknown:
                problems.append(
                    f"{name} calls unknown tools {unknown}; tools are: {', '.join(sorted(TOOLS))}"
                )
            elif steps and not TOOLS[steps[-1].tool].ends_episode:
                ending = ", ".join(t.name for t in TOOLS.values() if t.ends_episode)
                problems.append(f"{name} must end with a call that ends the episode ({ending})")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def service(self, name: str) -> ServiceSpec:
        """Return the service called `name`; KeyError if there is none."""
        for s in self.services:
            if s.name == name:
                return s
        raise KeyError(name)


__all__ = [
    "CATEGORIES",
    "METRICS",
    "REMEDIATIONS",
    "AlertRule",
    "Baseline",
    "Category",
    "DeploymentSpec",
    "ExpertSpec",
    "FaultKind",
    "FaultLog",
    "FaultSpec",
    "GroundTruth",
    "HiddenSpec",
    "Metric",
    "MigrationSpec",
    "Remediation",
    "ScenarioSpec",
    "ServiceSpec",
    "Severity",
    "SolutionStep",
    "StateCheck",
    "TerminalLine",
]
