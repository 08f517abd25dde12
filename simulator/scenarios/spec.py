"""The validated shape of `scenario.toml` and `topology.toml`, as pydantic models."""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..views import View

Metric = Literal["cpu", "memory", "error_rate", "p99_ms", "queue_depth", "business"]
"""The telemetry signals every service reports each simulated minute."""

METRICS: tuple[Metric, ...] = get_args(Metric)

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
    "bad_config",
    "feature_flag",
    "expired_certificate",
    "clock_skew",
    "disk_full",
    "consumer_lag",
    "cache_stampede",
    "retry_storm",
    "slow_query",
    "dependency_bump",
]
"""What kind of failure an incident is; the report's `category` field."""

CATEGORIES: tuple[Category, ...] = get_args(Category)

Remediation = Literal[
    "code_fix",
    "rollback_deployment",
    "rollback_migration",
    "restart_service",
    "scale_service",
    "rollback_config",
    "set_feature_flag",
    "renew_certificate",
    "sync_clock",
    "clean_disk",
    "skip_message",
    "warm_cache",
]
"""What resolves an incident; the report's `remediation` field. Each is named like the tool
that carries it out (see REMEDY_STEPS)."""

REMEDIATIONS: tuple[Remediation, ...] = get_args(Remediation)

REMEDY_STEPS: dict[str, tuple[frozenset[str], ...]] = {
    # Putting a config key back by hand is the same remedy as reverting its push.
    "rollback_config": (frozenset({"rollback_config", "set_config"}),),
    # A disk filled by a log level: freeing the disk without fixing the level only buys time.
    "clean_disk": (frozenset({"rollback_config", "set_config"}), frozenset({"clean_disk"})),
}
"""The operations a remediation takes on the root service, one of each step's tools per
step, when that is not simply the tool of its own name. The shaping (which operations were
needed) and the grader (was the claimed remediation done) both read it."""


def remedy_steps(remediation: str) -> tuple[frozenset[str], ...]:
    """The steps of `remediation`: each a set of tools any one of which carries it out."""
    return REMEDY_STEPS.get(remediation, (frozenset({remediation}),))


FaultKind = Literal[
    "code", "deployment", "migration", "capacity", "memory_leak", "crash_loop", "knob"
]

ConfigValue = bool | int | float | str
"""A runtime setting's value; a key keeps its type (an int key is not set to a string)."""


DEFAULT_SOAK_MINUTES = 15.0
"""The soak a family does not state: a quarter of an hour of the world running on."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def same_config_type(current: ConfigValue, new: ConfigValue) -> bool:
    """Whether `new` may replace `current`: the same type.

    An int is a fine float; a bool is not an int.
    """
    if isinstance(current, bool) or isinstance(new, bool):
        return isinstance(current, bool) and isinstance(new, bool)
    if isinstance(current, float):
        return isinstance(new, (int, float))
    return type(current) is type(new)


# -- knobs: the runtime settings of services (see simulator/knobs.py) --------------------------

KnobKind = Literal["config", "flag", "certificate", "clock", "disk", "queue", "cache"]
KNOB_PREDICATES: dict[str, tuple[str, ...]] = {
    "config": ("bad", "good", "above", "below"),
    "flag": ("above", "below"),
    "certificate": ("expired",),
    "clock": ("above",),
    "disk": ("above",),
    "queue": ("poison", "above"),
    "cache": ("cold",),
}
"""Per knob kind, the predicates a condition on it may use."""
_NAMED_KNOBS = ("config", "flag", "certificate", "queue")
"""Knob kinds that name one of several things (`config:<key>`); the others are one per
service (`clock`, `disk`, `cache`)."""
_PREDICATES = ("bad", "good", "above", "below", "expired", "poison", "cold")


class KnobRef(NamedTuple):
    """A parsed knob name: `config:http.timeout_ms` is ("config", "http.timeout_ms")."""

    kind: KnobKind
    name: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}" if self.name else self.kind


def parse_knob(text: str) -> KnobRef:
    """Parse a knob name: `config:<key>`, `flag:<name>`, `certificate:<name>`, `queue:<name>`.

    Or `clock`, `disk`, `cache`: one of each per service.

    Raises:
        ValueError: the text is none of these; the message lists the forms.
    """
    kind, sep, name = text.partition(":")
    forms = "config:<key>, flag:<name>, certificate:<name>, queue:<name>, clock, disk, cache"
    if kind not in KNOB_PREDICATES:
        raise ValueError(f"unknown knob {text!r}; knobs are {forms}")
    if (kind in _NAMED_KNOBS) != bool(sep and name):
        raise ValueError(f"knob {text!r} is malformed; knobs are {forms}")
    return KnobRef(kind, name)  # type: ignore[arg-type]  # kind checked against the keys above


class KnobCondition(_Strict):
    """A predicate on one knob of a service.

    A `knob` fault is active while it holds, and a `knob_ok` state check passes while it does
    not.

    Exactly one predicate, among those its knob's kind allows (KNOB_PREDICATES): `bad` (the
    value is one of these), `good` (the value is none of these), `above`/`below` (a number:
    config value, flag rollout percent, abs clock offset in seconds, disk used percent, queue
    depth), `expired = true` (certificate), `poison = true` (the queue's head message),
    `cold = true` (cache).
    """

    knob: str | None = None
    bad: tuple[ConfigValue, ...] | None = None
    good: tuple[ConfigValue, ...] | None = None
    above: float | None = None
    below: float | None = None
    expired: Literal[True] | None = None
    poison: Literal[True] | None = None
    cold: Literal[True] | None = None

    @model_validator(mode="after")
    def _one_predicate(self) -> KnobCondition:
        given = [p for p in _PREDICATES if getattr(self, p) is not None]
        if self.knob is None:
            if given:
                raise ValueError(f"predicates {given} need a knob")
            return self
        ref = parse_knob(self.knob)
        allowed = KNOB_PREDICATES[ref.kind]
        if len(given) != 1 or given[0] not in allowed:
            raise ValueError(
                f"knob {self.knob!r} needs exactly one predicate of {list(allowed)}, got {given}"
            )
        return self

    @property
    def ref(self) -> KnobRef:
        """The parsed knob; only on a condition that names one."""
        assert self.knob is not None, "a condition without a knob has no reference"
        return parse_knob(self.knob)

    @property
    def predicate(self) -> tuple[str, Any]:
        """(name, value) of its one predicate."""
        return next((p, getattr(self, p)) for p in _PREDICATES if getattr(self, p) is not None)


class ConfigPushSpec(_Strict):
    """A change of one config key, oldest first: the last push of a key is its current value."""

    service: str
    key: str
    value: ConfigValue
    minutes_ago: float = Field(ge=0)
    by: str = Field("config-bot", max_length=64)
    """Who pushed it."""


class WeatherSpec(_Strict):
    """A degradation no operation of the platform's cures: a service's signal moved from outside.

    A vendor's API that answers errors, a partner's slow endpoint: real incidents happen
    beside such weather, which shows on the dashboard as a sick row and in the service's own
    logs as what it is. Nothing the agent does changes it, and nothing it does needs to.
    """

    service: str
    metric: Metric
    delta: float = Field(gt=0)
    """What it adds to the signal's baseline while it lasts."""
    since_minutes_ago: float = Field(ge=0)


class FlagSpec(_Strict):
    """A feature flag and its rollout."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_.-]{0,63}$")
    service: str
    """The service that owns the flag (and reads it)."""
    rollout_percent: float = Field(ge=0, le=100)
    minutes_ago: float = Field(10_080.0, ge=0)
    """When the rollout was last changed."""
    by: str = Field("flag-bot", max_length=64)
    description: str = Field("", max_length=300)


class CertificateSpec(_Strict):
    """A TLS certificate a service presents or trusts."""

    service: str
    name: str = Field(pattern=r"^[a-z][a-z0-9_.-]{0,63}$")
    """What it is for: `ingress`, `client-to-payments`, `mtls-ca`."""
    hostnames: tuple[str, ...] = ()
    expires_in_minutes: float
    """From the page; negative: expired that many minutes before it."""


class QueueSpec(_Strict):
    """A message queue and the service that consumes it."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_.-]{0,63}$")
    service: str
    """The consumer."""
    depth: int = Field(0, ge=0)
    """Messages waiting."""
    poison: bool = False
    """The head message makes the consumer fail, every time it is retried."""
    head_message_id: str = Field("", max_length=64)


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
    config: dict[str, ConfigValue] = {}
    """Runtime settings and their values before any `[[config_pushes]]` (which change them)."""
    clock_offset_seconds: float = 0.0
    """How far its clock runs from true time (negative: behind)."""
    disk_used_pct: float = Field(40.0, ge=0, le=100)
    """Disk in use at baseline: what cleaning the disk brings it back to. It fills while the
    log level is DEBUG (knobs.DISK_FILL_PER_MINUTE)."""
    cache_warm: bool = True
    """Whether its cache is populated."""

    @model_validator(mode="after")
    def _config_keys(self) -> ServiceSpec:
        bad = [k for k in self.config if not _CONFIG_KEY.match(k)]
        if bad:
            raise ValueError(
                f"service {self.name!r}: config keys {bad} must match {_CONFIG_KEY.pattern}"
            )
        return self


_CONFIG_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,127}$")


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


def _condition(params: dict[str, Any]) -> KnobCondition:
    return KnobCondition.model_validate(params)


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
        if self.kind == "knob":
            if "knob" not in self.params:
                raise ValueError("fault kind 'knob' needs params ['knob'] and one predicate")
            self.condition  # noqa: B018  # validates the params now, not mid-episode
        return self

    @property
    def condition(self) -> KnobCondition:
        """A `knob` fault's params as a condition (the fault is active while it holds)."""
        return _condition(dict(self.params))


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


class FurtherFault(_Strict):
    """Another fault of an incident with several: where it lives and the remedy it needs."""

    service: str
    location: str
    category: Category
    remediation: Remediation


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
    further_faults: tuple[FurtherFault, ...] = ()
    """The incident's other faults, beside the primary one the report names: their remedies
    are needed operations, not unneeded ones (the hidden checks say whether they were done)."""


class StateCheck(KnobCondition):
    """A hidden check on the world's state rather than its code.

    A `knob_ok` check names a knob of `service` and a predicate, as a `knob` fault does, and
    passes while the predicate does not hold.
    """

    name: str
    kind: Literal[
        "deployed_version",
        "healthy",
        "migration_applied",
        "migration_absent",
        "replicas_at_least",
        "knob_ok",
    ]
    service: str
    version: str | None = None
    migration: str | None = None
    replicas: int | None = None

    @model_validator(mode="after")
    def _knob_for_knob_ok(self) -> StateCheck:
        if (self.kind == "knob_ok") != (self.knob is not None):
            raise ValueError(
                f"state check {self.name!r}: a knob (and one predicate) goes with kind"
                " 'knob_ok', and only with it"
            )
        return self


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


class RoleSpec(_Strict):
    """A role a seat can take: a name, what it is for, the tools it may use and what it sees.

    A session seat whose role is this name gets this view (and, unless the seat names its
    own, these tools); see `metasre.simulator.views`.
    """

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,63}$")
    description: str = Field("", max_length=500)
    tools: tuple[str, ...] = ()
    """The tools the role may use; empty: every tool its view allows."""
    view: View = View()


class ScenarioSpec(_Strict):
    """One incident, fully rendered for a seed."""

    id: str = Field(pattern=r"^[a-z0-9-]+/[a-z0-9-]+-v[0-9]+$")
    title: str
    severity: Severity
    difficulty: Literal["easy", "medium", "hard"]
    description: str
    sla_minutes: float = Field(gt=0)
    step_budget: int = Field(gt=0, le=1000)
    soak_minutes: float = Field(DEFAULT_SOAK_MINUTES, ge=0, le=24 * 60)
    """How long the world runs on after the report (and after `hidden.settle_minutes`) while
    the grader watches that the fix holds: long enough for a mitigation that leaves the cause
    in place to give way (a cleaned disk to fill again). See `metasre.simulator.soak`."""
    seed_varies: tuple[str, ...] = ()
    topology: str | None = None
    variables: dict[str, tuple[Any, ...]] = {}
    services: tuple[ServiceSpec, ...] = ()
    deployments: tuple[DeploymentSpec, ...] = ()
    migrations: tuple[MigrationSpec, ...] = ()
    config_pushes: tuple[ConfigPushSpec, ...] = ()
    """Config changes, oldest first."""
    flags: tuple[FlagSpec, ...] = ()
    certificates: tuple[CertificateSpec, ...] = ()
    queues: tuple[QueueSpec, ...] = ()
    weather: tuple[WeatherSpec, ...] = ()
    faults: tuple[FaultSpec, ...] = Field(min_length=1)
    alerts: tuple[AlertRule, ...] = ()
    ground_truth: GroundTruth
    hidden: HiddenSpec
    expert: ExpertSpec = ExpertSpec()
    solution: tuple[SolutionStep, ...] = Field(min_length=1)
    """The reference solution."""
    roles: tuple[RoleSpec, ...] = ()
    """Roles for a team, each with its view; a team incident splits its evidence among them."""
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
        for w in self.weather:
            need(w.service, "weather")
        need(self.ground_truth.service, "ground_truth")
        for svc in (*self.ground_truth.symptom_services, *self.ground_truth.red_herrings):
            need(svc, "ground_truth")
        for further in self.ground_truth.further_faults:
            need(further.service, "ground_truth further_faults")
        for c in self.hidden.state_checks:
            need(c.service, f"state check {c.name!r}")
        for r in self.roles:
            for svc in r.view.services or ():
                need(svc, f"role {r.name!r}'s view")
        role_names = [r.name for r in self.roles]
        if len(set(role_names)) != len(role_names):
            problems.append(f"roles named twice: {role_names}")
        if not problems:
            problems += self._knob_problems()
        if not (self.hidden.fail_to_pass or self.hidden.state_checks):
            problems.append("hidden needs at least one fail_to_pass check or state check")
        # Imported here, not at the top: the tools read the metric names from this module.
        from ..tools.registry import TOOLS

        for r in self.roles:
            unknown = sorted(set(r.tools) - TOOLS.keys())
            if unknown:
                problems.append(f"role {r.name!r} names unknown tools {unknown}")
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

    def _knob_problems(self) -> list[str]:
        """What the knobs' declarations and the conditions naming knobs get wrong."""
        problems: list[str] = []
        services = {s.name: s for s in self.services}
        config = {name: dict(s.config) for name, s in services.items()}

        def need(service: str, where: str) -> bool:
            if service not in services:
                problems.append(f"{where} names unknown service {service!r}")
                return False
            return True

        for p in self.config_pushes:
            where = f"config push of {p.service}/{p.key}"
            if not need(p.service, where):
                continue
            keys = config[p.service]
            if p.key not in keys:
                problems.append(
                    f"{where}: {p.service} has no config key {p.key!r}; declare it in the"
                    f" service's config (keys: {', '.join(sorted(keys)) or 'none'})"
                )
            elif not same_config_type(keys[p.key], p.value):
                problems.append(
                    f"{where}: value {p.value!r} is not a {type(keys[p.key]).__name__}"
                    f" like {keys[p.key]!r}"
                )
        for kind, names in (
            ("flag", [f.name for f in self.flags]),
            ("queue", [q.name for q in self.queues]),
            ("certificate", [f"{c.service}/{c.name}" for c in self.certificates]),
        ):
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                problems.append(f"{kind}s declared twice: {twice}")
        for f in self.flags:
            need(f.service, f"flag {f.name!r}")
        for c in self.certificates:
            need(c.service, f"certificate {c.name!r}")
        for q in self.queues:
            need(q.service, f"queue {q.name!r}")
        conditions: list[tuple[str, str, KnobCondition]] = [
            (f"fault on {f.service}", f.service, f.condition)
            for f in self.faults
            if f.kind == "knob"
        ]
        conditions += [
            (f"state check {c.name!r}", c.service, c)
            for c in self.hidden.state_checks
            if c.kind == "knob_ok"
        ]
        for where, service, cond in conditions:
            problem = self._unknown_knob(service, cond.ref)
            if problem:
                problems.append(f"{where}: {problem}")
        if not problems:
            problems += self._knob_faults_hold()
        return problems

    def _knob_faults_hold(self) -> list[str]:
        """Problems with `knob` faults whose condition does not hold at the page.

        A fault starts active; one whose condition did not hold would be 'cured' by the first
        call, whatever it was.
        """
        # Imported here: the knobs read their declarations from this module.
        from ..knobs import Knobs

        knobs = Knobs(self, lambda *event: None)
        problems = []
        for f in self.faults:
            if f.kind == "knob" and not knobs.holds(f.service, f.condition, 0.0):
                predicate, value = f.condition.predicate
                wanted = list(value) if isinstance(value, tuple) else value
                problems.append(
                    f"fault on {f.service}: {f.condition.knob} does not hold {predicate} = "
                    f"{wanted!r} at the page (now {knobs.value(f.service, f.condition, 0.0)!r});"
                    " check the pushes, their order and minutes_ago"
                )
        return problems

    def _unknown_knob(self, service: str, ref: KnobRef) -> str | None:
        """Why `ref` names no knob of `service`, or None if it does."""
        if ref.kind == "config":
            keys = sorted(self.service(service).config)
            if ref.name not in keys:
                return (
                    f"{service} has no config key {ref.name!r}; keys: {', '.join(keys) or 'none'}"
                )
        elif ref.kind == "flag":
            flags = sorted(f.name for f in self.flags)
            if ref.name not in flags:
                return f"no flag {ref.name!r}; flags: {', '.join(flags) or 'none'}"
        elif ref.kind == "certificate":
            certs = sorted(c.name for c in self.certificates if c.service == service)
            if ref.name not in certs:
                return (
                    f"{service} has no certificate {ref.name!r}; its certificates:"
                    f" {', '.join(certs) or 'none'}"
                )
        elif ref.kind == "queue":
            queues = sorted(q.name for q in self.queues if q.service == service)
            if ref.name not in queues:
                return (
                    f"{service} consumes no queue {ref.name!r}; it consumes:"
                    f" {', '.join(queues) or 'none'}"
                )
        return None

    def service(self, name: str) -> ServiceSpec:
        """Return the service called `name`; KeyError if there is none."""
        for s in self.services:
            if s.name == name:
                return s
        raise KeyError(name)


__all__ = [
    "CATEGORIES",
    "DEFAULT_SOAK_MINUTES",
    "KNOB_PREDICATES",
    "METRICS",
    "REMEDIATIONS",
    "REMEDY_STEPS",
    "AlertRule",
    "Baseline",
    "Category",
    "CertificateSpec",
    "ConfigPushSpec",
    "ConfigValue",
    "DeploymentSpec",
    "ExpertSpec",
    "FaultKind",
    "FaultLog",
    "FaultSpec",
    "FlagSpec",
    "FurtherFault",
    "GroundTruth",
    "HiddenSpec",
    "KnobCondition",
    "KnobKind",
    "KnobRef",
    "Metric",
    "MigrationSpec",
    "QueueSpec",
    "Remediation",
    "ScenarioSpec",
    "ServiceSpec",
    "Severity",
    "SolutionStep",
    "StateCheck",
    "TerminalLine",
    "WeatherSpec",
    "parse_knob",
    "remedy_steps",
    "same_config_type",
]
