"""The operational state of the platform: releases, replicas, restarts, migrations and knobs."""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import OperationError
from .knobs import Knobs
from .scenarios.spec import ScenarioSpec


@dataclass(frozen=True, slots=True)
class Release:
    """A version of a service going live."""

    version: str
    at_minute: float
    """Simulated minutes since the incident started (negative: before the page)."""
    by: str
    """Who shipped it: a release engineer before the incident, an agent id after."""
    commit: str | None = None


@dataclass(frozen=True, slots=True)
class WorldEvent:
    """Something an operation did, for logs, terminal output and deploy markers."""

    at_minute: float
    service: str
    kind: str
    """deploy, rollback, restart, scale, migration_rollback, hotfix; and the knobs' changes:
    config, config_rollback, flag, certificate, clock_sync, disk_clean, message_skip,
    cache_warm."""
    text: str
    by: str


@dataclass(frozen=True, slots=True)
class Disruption:
    """What an operation does to a service's signals while it happens, needed or not."""

    service: str
    start: float
    """Simulated minute it began."""
    minutes: int
    metric: str
    delta: float
    """Added to the metric for each whole minute of the window."""

    def covers(self, minute: int) -> bool:
        """Whether `minute` is inside the window."""
        first = int(self.start)
        return first <= minute < first + self.minutes


RESTART_OUTAGE = (1, 0.5)
"""(minutes, error rate added): every replica restarting at once drops requests for a minute."""
ROLLBACK_OUTAGE = (2, 0.3)
"""A rollback is a deploy: pods cycle, and requests fail while they do."""
WEATHER_MINUTES = 10**7
"""Weather outlasts any episode: nothing the platform's operators do ends it."""
MIGRATION_OUTAGE = (3, 0.25)
"""Reverting a schema fails the writes that meet it half-way (and loses what it dropped)."""


@dataclass(slots=True)
class ServiceState:
    """One service's mutable operational state."""

    name: str
    code_dir: str | None
    depends_on: tuple[str, ...]
    replicas: int
    initial_replicas: int
    releases: list[Release]
    restarts: list[float] = field(default_factory=list)

    @property
    def version(self) -> str:
        """The version running now."""
        return self.releases[-1].version


@dataclass(slots=True)
class MigrationState:
    """One migration and whether it is applied."""

    service: str
    id: str
    applied_at: float
    file: str | None
    rolled_back_at: float | None = None

    @property
    def applied(self) -> bool:
        """True until it is rolled back."""
        return self.rolled_back_at is None


class World:
    """Services, releases, replicas, migrations and knobs, changed only by operations."""

    __slots__ = ("disruptions", "events", "knobs", "migrations", "services")

    def __init__(self, spec: ScenarioSpec) -> None:
        self.services: dict[str, ServiceState] = {}
        deployments = sorted(spec.deployments, key=lambda d: -d.minutes_ago)
        for s in spec.services:
            releases = [
                Release(d.version, -d.minutes_ago, "release-bot", d.commit)
                for d in deployments
                if d.service == s.name
            ] or [Release(s.version, -10_080.0, "release-bot")]
            self.services[s.name] = ServiceState(
                s.name, s.code_dir, s.depends_on, s.replicas, s.replicas, releases
            )
        self.migrations: list[MigrationState] = [
            MigrationState(m.service, m.id, -m.minutes_ago, m.file)
            for m in sorted(spec.migrations, key=lambda m: -m.minutes_ago)
        ]
        self.events: list[WorldEvent] = [
            WorldEvent(r.at_minute, name, "deploy", f"deployed {name} {r.version}", r.by)
            for name, svc in self.services.items()
            for r in svc.releases
        ]
        self.disruptions: list[Disruption] = [
            Disruption(w.service, -w.since_minutes_ago, WEATHER_MINUTES, w.metric, w.delta)
            for w in spec.weather
        ]
        """Outage windows operations caused (a cost in the world of every operation, on top
        of its price in the grade when the incident did not need it), and the spec's weather."""
        self.knobs = Knobs(spec, self._record)
        """Runtime settings: config, flags, certificates, clocks, disks, queues, caches."""
        self.events.sort(key=lambda e: e.at_minute)

    def _record(
        self,
        at: float,
        service: str,
        kind: str,
        text: str,
        by: str,
        outage: tuple[str, int, float] | None,
    ) -> None:
        """Record a knob's change, and the outage it causes as (metric, minutes, delta)."""
        self.events.append(WorldEvent(at, service, kind, text, by))
        if outage is not None:
            metric, minutes, delta = outage
            self.disruptions.append(Disruption(service, at, minutes, metric, delta))

    def service(self, name: str) -> ServiceState:
        """Return the service called `name`.

        Raises:
            OperationError: no such service; the message lists the real ones.
        """
        try:
            return self.services[name]
        except KeyError:
            raise OperationError(
                f"no service named {name!r}; services are: {', '.join(sorted(self.services))}"
            ) from None

    def dependents(self, name: str) -> list[str]:
        """Services that call `name` directly."""
        return sorted(s.name for s in self.services.values() if name in s.depends_on)

    def rollback_deployment(self, name: str, to_version: str | None, at: float, by: str) -> Release:
        """Put an earlier release of `name` back in service."""
        svc = self.service(name)
        known = [r.version for r in svc.releases]
        if to_version is None:
            earlier = [v for v in known if v != svc.version]
            if not earlier:
                raise OperationError(
                    f"{name} has no earlier release than {svc.version} to roll back to"
                )
            to_version = earlier[-1]
        if to_version == svc.version:
            raise OperationError(f"{name} already runs {to_version}; releases: {', '.join(known)}")
        if to_version not in known:
            raise OperationError(
                f"{name} never ran {to_version!r}; its releases are: {', '.join(known)}"
            )
        previous = svc.version
        commit = next(r.commit for r in reversed(svc.releases) if r.version == to_version)
        release = Release(to_version, at, by, commit)
        svc.releases.append(release)
        self.disruptions.append(
            Disruption(name, at, ROLLBACK_OUTAGE[0], "error_rate", ROLLBACK_OUTAGE[1])
        )
        self.events.append(
            WorldEvent(at, name, "rollback", f"rolled back {name} {previous} -> {to_version}", by)
        )
        return release

    def restart(self, name: str, at: float, by: str) -> None:
        """Restart every replica of `name`."""
        svc = self.service(name)
        svc.restarts.append(at)
        self.knobs.note_restart(name)
        self.disruptions.append(
            Disruption(name, at, RESTART_OUTAGE[0], "error_rate", RESTART_OUTAGE[1])
        )
        self.events.append(
            WorldEvent(at, name, "restart", f"restarted {svc.replicas} replicas of {name}", by)
        )

    def scale(self, name: str, replicas: int, at: float, by: str) -> int:
        """Set the replica count of `name`; returns the previous count."""
        svc = self.service(name)
        previous, svc.replicas = svc.replicas, replicas
        self.events.append(
            WorldEvent(
                at, name, "scale", f"scaled {name} from {previous} to {replicas} replicas", by
            )
        )
        return previous

    def applied_migrations(self, service: str | None = None) -> list[MigrationState]:
        """Migrations still applied, oldest first, optionally of one service."""
        return [m for m in self.migrations if m.applied and service in (None, m.service)]

    def rollback_migration(
        self, service: str, migration: str, at: float, by: str
    ) -> MigrationState:
        """Roll back one applied migration of `service`."""
        self.service(service)
        for m in self.migrations:
            if m.service == service and m.id == migration:
                if not m.applied:
                    raise OperationError(
                        f"migration {migration} of {service} is already rolled back"
                    )
                m.rolled_back_at = at
                self.disruptions.append(
                    Disruption(service, at, MIGRATION_OUTAGE[0], "error_rate", MIGRATION_OUTAGE[1])
                )
                self.events.append(
                    WorldEvent(
                        at,
                        service,
                        "migration_rollback",
                        f"rolled back migration {migration} on {service}",
                        by,
                    )
                )
                return m
        ids = [m.id for m in self.migrations if m.service == service and m.applied]
        raise OperationError(
            f"{service} has no applied migration {migration!r}; applied: {', '.join(ids) or 'none'}"
        )

    def record_hotfix(self, service: str, at: float, by: str, path: str) -> None:
        """Note that an agent's code edit went live on `service`."""
        self.events.append(
            WorldEvent(at, service, "hotfix", f"hotfix to {path} live on {service}", by)
        )
