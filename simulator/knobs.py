"""The runtime settings of services: config and its pushes, flags, certificates, clocks, disks.

And the queues services consume and their caches.

Everything here is state an operator changes without shipping code, a release or a migration.
The world holds one `Knobs`; the settings tools (`tools/settings.py`) read and change it, a
`knob` fault is active while a condition on it holds, and a `knob_ok` state check passes while
that condition does not. Every change is recorded as a world event, like a deploy.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import OperationError
from .scenarios.spec import (
    ConfigValue,
    KnobCondition,
    ScenarioSpec,
    same_config_type,
)

DISK_FILL_PER_MINUTE = 1.0
"""Percentage points of disk a service's logs fill per simulated minute at log level DEBUG."""
LOG_LEVEL_KEY = "log_level"
"""The config key whose value DEBUG fills the disk."""
CERTIFICATE_LIFETIME_MINUTES = 90 * 24 * 60.0
"""A renewed certificate is valid for 90 days."""
CONFIG_RELOAD_OUTAGE = (1, 0.15)
"""(minutes, error rate added): a config reload drains and reopens connections for a minute."""
CERTIFICATE_ROTATION_OUTAGE = (1, 0.1)
"""Rotating a certificate resets the TLS sessions open with it."""
DISK_CLEAN_OUTAGE = (1, 0.05)
"""Rotating logs under load stalls the writers for a moment."""
CACHE_WARM_LOAD = (2, 0.2)
"""(minutes, cpu added): pre-loading a cache reads its whole working set."""

Recorder = Callable[[float, str, str, str, str, "tuple[str, int, float] | None"], None]
"""How knobs record a change in the world: (minute, service, event kind, text, by, outage as
(metric, minutes, delta) or None)."""


@dataclass(frozen=True, slots=True)
class ConfigPush:
    """One change of a config key."""

    service: str
    key: str
    old: ConfigValue
    new: ConfigValue
    at_minute: float
    by: str
    rollback_of: ConfigPush | None = None
    """The push this one reverted, if it is a rollback."""


@dataclass(slots=True)
class Flag:
    """A feature flag and its rollout."""

    name: str
    service: str
    rollout_percent: float
    changed_at: float
    by: str
    description: str


@dataclass(slots=True)
class Certificate:
    """A TLS certificate of a service."""

    service: str
    name: str
    hostnames: tuple[str, ...]
    expires_at: float
    """Simulated minute it expires (it may be in the past, or in the episode)."""

    def expired(self, minute: float) -> bool:
        """Whether it is expired at `minute`."""
        return minute >= self.expires_at


@dataclass(slots=True)
class Queue:
    """A message queue and its consumer."""

    name: str
    service: str
    depth: int
    poison: bool
    head_message_id: str
    dead_lettered: list[str] = field(default_factory=list)
    """Message ids skipped to the dead-letter queue, oldest first."""


@dataclass(slots=True)
class ServiceKnobs:
    """One service's runtime settings."""

    name: str
    initial_config: dict[str, ConfigValue]
    """The values before any push: the type of each key, and what a first push replaced."""
    config: dict[str, ConfigValue]
    pushes: list[ConfigPush]
    """Its config pushes, oldest first (rollbacks included)."""
    clock_offset_seconds: float
    disk_baseline_pct: float
    disk_cleaned_at: float
    """Since when the disk fills from its baseline: the start of its log level history, or
    its last cleaning."""
    cache_warm: bool

    def disk_used_pct(self, minute: float) -> float:
        """Disk in use at `minute`, in percent (at most 100).

        The baseline, plus what DEBUG logging wrote since the last cleaning.
        """
        debug = 0.0
        level = self.initial_config.get(LOG_LEVEL_KEY)
        since = self.disk_cleaned_at
        for push in self.pushes:
            if push.key != LOG_LEVEL_KEY:
                continue
            if push.at_minute > minute:
                break
            if push.at_minute > since:
                debug += _debug_minutes(level, push.at_minute - since)
                since = push.at_minute
            level = push.new
        debug += _debug_minutes(level, max(0.0, minute - since))
        return round(min(100.0, self.disk_baseline_pct + DISK_FILL_PER_MINUTE * debug), 4)


def _debug_minutes(level: ConfigValue | None, minutes: float) -> float:
    return minutes if str(level).upper() == "DEBUG" else 0.0


class Knobs:
    """Every service's runtime settings.

    Changed only through these methods, each of which records a world event.
    """

    __slots__ = ("_record", "certificates", "flags", "queues", "services")

    def __init__(self, spec: ScenarioSpec, record: Recorder) -> None:
        self._record = record
        self.services: dict[str, ServiceKnobs] = {}
        pushes = sorted(spec.config_pushes, key=lambda p: -p.minutes_ago)  # stable: oldest first
        for s in spec.services:
            config = dict(s.config)
            history = []
            for p in pushes:
                if p.service == s.name:
                    history.append(
                        ConfigPush(s.name, p.key, config[p.key], p.value, -p.minutes_ago, p.by)
                    )
                    config[p.key] = p.value
            level_pushes = [p.at_minute for p in history if p.key == LOG_LEVEL_KEY]
            self.services[s.name] = ServiceKnobs(
                s.name,
                dict(s.config),
                config,
                history,
                s.clock_offset_seconds,
                s.disk_used_pct,
                min([0.0, *level_pushes]),
                s.cache_warm,
            )
            for push in history:
                record(push.at_minute, s.name, "config", _push_text(push), push.by, None)
        self.flags: dict[str, Flag] = {
            f.name: Flag(f.name, f.service, f.rollout_percent, -f.minutes_ago, f.by, f.description)
            for f in spec.flags
        }
        for f in self.flags.values():
            record(f.changed_at, f.service, "flag", _flag_text(f), f.by, None)
        self.certificates: dict[tuple[str, str], Certificate] = {
            (c.service, c.name): Certificate(c.service, c.name, c.hostnames, c.expires_in_minutes)
            for c in spec.certificates
        }
        self.queues: dict[str, Queue] = {
            q.name: Queue(q.name, q.service, q.depth, q.poison, q.head_message_id)
            for q in spec.queues
        }

    # -- reading ----------------------------------------------------------------------------

    def of(self, service: str) -> ServiceKnobs:
        """The settings of `service` (KeyError if it does not exist: callers check first)."""
        return self.services[service]

    def flags_of(self, service: str) -> list[Flag]:
        """Flags `service` owns, by name."""
        return sorted((f for f in self.flags.values() if f.service == service), key=_name)

    def certificates_of(self, service: str) -> list[Certificate]:
        """Certificates of `service`, by name."""
        return sorted((c for c in self.certificates.values() if c.service == service), key=_name)

    def queues_of(self, service: str) -> list[Queue]:
        """Queues `service` consumes, by name."""
        return sorted((q for q in self.queues.values() if q.service == service), key=_name)

    def holds(self, service: str, condition: KnobCondition, minute: float) -> bool:
        """Whether `condition` holds for a knob of `service` at `minute`.

        The spec proved the knob exists (ScenarioSpec); a value that compares with nothing (a
        string against `above`) does not hold.
        """
        predicate, wanted = condition.predicate
        value = self.value(service, condition, minute)
        if predicate == "bad":
            return any(_equal(value, v) for v in wanted)
        if predicate == "good":
            return not any(_equal(value, v) for v in wanted)
        if predicate in ("expired", "poison", "cold"):
            return bool(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        bound = float(wanted)
        return value > bound if predicate == "above" else value < bound

    def value(self, service: str, condition: KnobCondition, minute: float) -> ConfigValue:
        """The value `condition` compares on a knob of `service` at `minute` (KnobCondition)."""
        ref, predicate = condition.ref, condition.predicate[0]
        svc = self.services[service]
        if ref.kind == "config":
            return svc.config[ref.name]
        if ref.kind == "flag":
            return self.flags[ref.name].rollout_percent
        if ref.kind == "certificate":
            return self.certificates[(service, ref.name)].expired(minute)
        if ref.kind == "clock":
            return abs(svc.clock_offset_seconds)
        if ref.kind == "disk":
            return svc.disk_used_pct(minute)
        if ref.kind == "queue":
            queue = self.queues[ref.name]
            # `poison = true` asks about the head message, `above` about the depth.
            return queue.poison if predicate == "poison" else queue.depth
        return not svc.cache_warm

    # -- changing ---------------------------------------------------------------------------

    def set_config(
        self, service: str, key: str, value: ConfigValue, at: float, by: str
    ) -> ConfigPush:
        """Push one existing key's new value; the service reloads.

        Raises:
            OperationError: no such key (the message lists them), or a value of another type.
        """
        svc = self.services[service]
        if key not in svc.config:
            raise OperationError(
                f"{service} has no config key {key!r}; its keys are:"
                f" {', '.join(sorted(svc.config)) or 'none'}"
            )
        current = svc.config[key]
        if not same_config_type(current, value):
            raise OperationError(
                f"{service} {key} is a {type(current).__name__} (now {json.dumps(current)});"
                f" {json.dumps(value)} is a {type(value).__name__}"
            )
        if isinstance(current, float) and not isinstance(value, float):
            value = float(value)
        return self._push(ConfigPush(service, key, current, value, at, by))

    def rollback_config(self, service: str, at: float, by: str) -> ConfigPush:
        """Revert the newest config push of `service` that is not itself reverted.

        Raises:
            OperationError: it has no push left to revert.
        """
        svc = self.services[service]
        reverted = {id(p.rollback_of) for p in svc.pushes if p.rollback_of is not None}
        target = next(
            (p for p in reversed(svc.pushes) if p.rollback_of is None and id(p) not in reverted),
            None,
        )
        if target is None:
            raise OperationError(f"{service} has no config push to roll back")
        push = ConfigPush(service, target.key, svc.config[target.key], target.old, at, by, target)
        return self._push(push)

    def _push(self, push: ConfigPush) -> ConfigPush:
        svc = self.services[push.service]
        svc.config[push.key] = push.new
        svc.pushes.append(push)
        kind = "config" if push.rollback_of is None else "config_rollback"
        outage = ("error_rate", *CONFIG_RELOAD_OUTAGE)
        self._record(push.at_minute, push.service, kind, _push_text(push), push.by, outage)
        return push

    def set_flag(self, name: str, percent: float, at: float, by: str) -> float:
        """Set a flag's rollout; returns the previous percent.

        Raises:
            OperationError: no such flag; the message lists them.
        """
        flag = self.flag(name)
        previous = flag.rollout_percent
        flag.rollout_percent, flag.changed_at, flag.by = percent, at, by
        self._record(at, flag.service, "flag", _flag_text(flag, previous), by, None)
        return previous

    def flag(self, name: str) -> Flag:
        """The flag called `name`.

        Raises:
            OperationError: no such flag; the message lists them.
        """
        try:
            return self.flags[name]
        except KeyError:
            flags = ", ".join(sorted(self.flags)) or "none"
            raise OperationError(f"no feature flag named {name!r}; flags are: {flags}") from None

    def renew_certificate(self, service: str, name: str, at: float, by: str) -> Certificate:
        """Issue a fresh certificate for the same hostnames, valid for 90 days from `at`.

        Raises:
            OperationError: `service` has no such certificate; the message lists its own.
        """
        cert = self.certificates.get((service, name))
        if cert is None:
            names = ", ".join(c.name for c in self.certificates_of(service)) or "none"
            raise OperationError(
                f"{service} has no certificate {name!r}; its certificates are: {names}"
            )
        cert.expires_at = at + CERTIFICATE_LIFETIME_MINUTES
        hosts = ", ".join(cert.hostnames) or "no hostnames"
        self._record(
            at,
            service,
            "certificate",
            f"renewed certificate {name} of {service} ({hosts})",
            by,
            ("error_rate", *CERTIFICATE_ROTATION_OUTAGE),
        )
        return cert

    def sync_clock(self, service: str, at: float, by: str) -> float:
        """Step the service's clock to true time; returns the offset it had, in seconds."""
        svc = self.services[service]
        previous, svc.clock_offset_seconds = svc.clock_offset_seconds, 0.0
        self._record(
            at,
            service,
            "clock_sync",
            f"synced the clock of {service} (was {previous:+g}s)",
            by,
            None,
        )
        return previous

    def clean_disk(self, service: str, at: float, by: str) -> tuple[float, float]:
        """Rotate and delete old logs: the disk goes back to its baseline.

        It fills again if the log level is still DEBUG. Returns (used before, used after) in
        percent.
        """
        svc = self.services[service]
        before = svc.disk_used_pct(at)
        svc.disk_cleaned_at = at
        after = svc.disk_used_pct(at)
        self._record(
            at,
            service,
            "disk_clean",
            f"rotated and deleted old logs on {service}: disk {before:.0f}% -> {after:.0f}%",
            by,
            ("error_rate", *DISK_CLEAN_OUTAGE),
        )
        return before, after

    def queue(self, name: str) -> Queue:
        """The queue called `name`.

        Raises:
            OperationError: no such queue; the message lists them.
        """
        try:
            return self.queues[name]
        except KeyError:
            raise OperationError(
                f"no queue named {name!r}; queues are: {', '.join(sorted(self.queues)) or 'none'}"
            ) from None

    def skip_message(self, name: str, at: float, by: str) -> str:
        """Dead-letter the head message of a queue (it is not processed); returns its id.

        Raises:
            OperationError: no such queue, or it is empty.
        """
        queue = self.queue(name)
        if queue.depth == 0:
            raise OperationError(f"queue {name} is empty; there is no message to skip")
        skipped = queue.head_message_id or f"{name}-head"
        queue.dead_lettered.append(skipped)
        queue.depth -= 1
        queue.poison = False
        # The next message is an ordinary one; its id is not known to anyone in advance.
        queue.head_message_id = f"{skipped}+1" if queue.depth else ""
        self._record(
            at,
            queue.service,
            "message_skip",
            f"dead-lettered message {skipped} from queue {name} (not processed)",
            by,
            None,
        )
        return skipped

    def warm_cache(self, service: str, at: float, by: str) -> bool:
        """Pre-load the cache of `service`; returns whether it was warm already."""
        svc = self.services[service]
        was, svc.cache_warm = svc.cache_warm, True
        self._record(
            at,
            service,
            "cache_warm",
            f"pre-loaded the cache of {service}",
            by,
            ("cpu", *CACHE_WARM_LOAD),
        )
        return was

    def note_restart(self, service: str) -> None:
        """A restart empties the in-process cache of `service`."""
        self.services[service].cache_warm = False


def _equal(a: ConfigValue, b: ConfigValue) -> bool:
    """Equality that keeps True apart from 1 (a bool key is not an int one)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=0, abs_tol=1e-9)
    return a == b


def _name(thing: Flag | Certificate | Queue) -> str:
    return thing.name


def _push_text(push: ConfigPush) -> str:
    verb = "rolled back" if push.rollback_of is not None else "set"
    old, new = json.dumps(push.old), json.dumps(push.new)
    return f"{verb} config {push.key} on {push.service}: {old} -> {new}"


def _flag_text(flag: Flag, previous: float | None = None) -> str:
    was = "" if previous is None else f" (was {previous:g}%)"
    return f"feature flag {flag.name} rollout set to {flag.rollout_percent:g}%{was}"


__all__ = [
    "CACHE_WARM_LOAD",
    "CERTIFICATE_LIFETIME_MINUTES",
    "CERTIFICATE_ROTATION_OUTAGE",
    "CONFIG_RELOAD_OUTAGE",
    "DISK_CLEAN_OUTAGE",
    "DISK_FILL_PER_MINUTE",
    "LOG_LEVEL_KEY",
    "Certificate",
    "ConfigPush",
    "Flag",
    "Knobs",
    "Queue",
    "ServiceKnobs",
]
