"""Fault models: when a fault is active, and how strong it is at each simulated minute."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .scenarios.spec import FaultSpec
from .world import World

Transition = Literal["on", "off", "reset"]


@dataclass(frozen=True, slots=True)
class FaultEvent:
    """A change in a fault's course at a simulated minute."""

    at_minute: float
    transition: Transition


class Fault:
    """One fault of a scenario and its course over the episode.

    Strength rises linearly to 1 over `ramp_minutes` while the fault is active and falls to 0
    over `recover_minutes` once it is cured; a `reset` (a restart of a leaking service) drops it to
    0 without curing it, so it grows back.
    """

    __slots__ = ("_events", "spec")

    def __init__(self, spec: FaultSpec) -> None:
        self.spec = spec
        self._events: list[FaultEvent] = [FaultEvent(-spec.onset_minutes_ago, "on")]

    @property
    def active(self) -> bool:
        """Whether the fault is live now (after the last recorded event)."""
        for event in reversed(self._events):
            if event.transition != "reset":
                return event.transition == "on"
        return False  # unreachable: the first event is always "on"

    def cured_at(self) -> float | None:
        """When the fault was last cured, or None while it is active."""
        return None if self.active else self._events[-1].at_minute

    def wants_active(self, world: World, code_checks_fail: bool, at: float) -> bool:
        """Whether the world's state at minute `at` keeps this fault alive."""
        spec, params = self.spec, self.spec.params
        svc = world.services[spec.service]
        if spec.kind == "knob":
            # Knobs can move with time alone (a disk filling, a certificate expiring).
            return world.knobs.holds(spec.service, spec.condition, at)
        if spec.kind == "code":
            # Rolling back the release that shipped the bug takes the bad code out of service
            # even though the repository still has it.
            shipped = "bad_version" not in params or svc.version == str(params["bad_version"])
            return code_checks_fail and shipped
        if spec.kind == "deployment":
            return svc.version == str(params["bad_version"])
        if spec.kind == "migration":
            return any(m.id == params["migration"] for m in world.applied_migrations())
        if spec.kind in ("capacity", "memory_leak"):
            return svc.replicas < int(params["required_replicas"])
        # crash_loop: stuck until the service is restarted after the fault began.
        return not any(t >= -spec.onset_minutes_ago for t in svc.restarts)

    def update(self, world: World, code_checks_fail: bool, at: float) -> Transition | None:
        """Record the transition the world's state implies at minute `at`, if any."""
        wants = self.wants_active(world, code_checks_fail, at)
        if wants != self.active:
            transition: Transition = "on" if wants else "off"
            self._events.append(FaultEvent(at, transition))
            return transition
        return None

    def copy(self) -> Fault:
        """An independent copy with the same course so far."""
        twin = Fault(self.spec)
        twin._events = list(self._events)
        return twin

    def note_restart(self, at: float) -> None:
        """A restart of the root service clears a leak's accumulated strength, for a while."""
        if self.spec.kind == "memory_leak" and self.active:
            self._events.append(FaultEvent(at, "reset"))

    def strength(self, minute: float) -> float:
        """The fault's strength in [0, 1] at `minute`."""
        ramp, recover = self.spec.ramp_minutes, self.spec.recover_minutes
        level, since, active = 0.0, self._events[0].at_minute, False
        for event in self._events:
            if event.at_minute > minute:
                break
            level = _advance(level, event.at_minute - since, active, ramp, recover)
            since = event.at_minute
            if event.transition == "reset":
                level = 0.0
            else:
                active = event.transition == "on"
        if minute < self._events[0].at_minute:
            return 0.0
        return _advance(level, minute - since, active, ramp, recover)


def _advance(level: float, dt: float, active: bool, ramp: float, recover: float) -> float:
    if active:
        return min(1.0, level + dt / ramp)
    return max(0.0, level - dt / recover)
