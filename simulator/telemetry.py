"""Telemetry driven by state: every service's signals per simulated minute."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from metasre.simulator import noise
from metasre.simulator.faults import Fault
from metasre.simulator.scenarios.spec import METRICS, Metric, ScenarioSpec, ServiceSpec
from metasre.simulator.world import World

Health = Literal["healthy", "degraded", "down"]

# Relative noise per metric: errors are spiky, CPU wanders, business counts drift.
_NOISE: dict[Metric, float] = {
    "cpu": 0.06,
    "memory": 0.02,
    "error_rate": 0.35,
    "p99_ms": 0.08,
    "queue_depth": 0.25,
    "business": 0.04,
}
_CAPPED: frozenset[Metric] = frozenset({"cpu", "memory", "error_rate"})
_CACHE_LIMIT = 2048


@dataclass(frozen=True, slots=True)
class ServiceSignals:
    """One service's signals at one minute."""

    service: str
    minute: int
    cpu: float
    memory: float
    error_rate: float
    p99_ms: float
    queue_depth: float
    business: float
    health: Health

    def get(self, metric: Metric) -> float:
        """The value of `metric`."""
        return float(getattr(self, metric))


class Telemetry:
    """Computes signals from the baseline, the faults' strength and the world's state.

    Nothing is stored per minute: a value is a pure function of (seed, service, metric, minute)
    and the fault and world history, so any window can be queried at any time.
    """

    __slots__ = ("_cache", "_faults", "_seed", "_services", "_streams", "_world")

    def __init__(
        self, spec: ScenarioSpec, seed: int, world: World, faults: Sequence[Fault]
    ) -> None:
        self._seed = seed
        self._world = world
        self._faults = tuple(faults)
        self._services: dict[str, ServiceSpec] = {s.name: s for s in spec.services}
        self._streams = {(s.name, m): noise.key(s.name, m) for s in spec.services for m in METRICS}
        # Values repeat across calls (every observation re-reads the dashboard and the alerts'
        # history), so they are memoised until the world or a fault changes; bounded so an
        # idle episode costs little.
        self._cache: dict[tuple[str, str, int], float] = {}

    def invalidate(self) -> None:
        """Forget memoised values: call after any change to the world or a fault's course."""
        self._cache.clear()

    def value(self, service: str, metric: Metric, minute: int) -> float:
        """The value of one signal at one minute."""
        key = (service, metric, minute)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        value = self._cache[key] = self._compute(service, metric, minute)
        return value

    def _compute(self, service: str, metric: Metric, minute: int) -> float:
        base = float(getattr(self._services[service].baseline, metric))
        state = self._world.services[service]
        if metric == "cpu" and state.replicas > 0:
            # The same traffic spread over more replicas costs each of them less.
            base = base * state.initial_replicas / state.replicas
        jitter = noise.signed(self._seed, self._streams[(service, metric)], minute)
        value = base * (1.0 + _NOISE[metric] * jitter)
        for fault in self._faults:
            effect = fault.spec.effects.get(service)
            if effect and metric in effect:
                value += effect[metric] * fault.strength(minute)
        if state.replicas == 0 and metric == "error_rate":
            value = 1.0
        value = max(0.0, value)
        if metric in _CAPPED:
            value = min(1.0, value)
        return round(value, 4)

    def signals(self, service: str, minute: int) -> ServiceSignals:
        """Every signal of `service` at `minute`, with its health."""
        v = {m: self.value(service, m, minute) for m in METRICS}
        return ServiceSignals(service, minute, health=self._health(service, v), **v)

    def series(self, service: str, metric: Metric, start: int, end: int) -> list[tuple[int, float]]:
        """(minute, value) pairs for minutes start..end inclusive."""
        return [(m, self.value(service, metric, m)) for m in range(start, end + 1)]

    def _health(self, service: str, v: dict[Metric, float]) -> Health:
        base = self._services[service].baseline
        if v["error_rate"] >= 0.5 or self._world.services[service].replicas == 0:
            return "down"
        degraded = (
            v["error_rate"] >= max(0.05, 5 * base.error_rate)
            or v["p99_ms"] >= 3 * base.p99_ms
            or v["cpu"] >= 0.9
            or v["memory"] >= 0.92
            or v["queue_depth"] >= 10 * base.queue_depth + 20
            or (base.business > 0 and v["business"] <= 0.7 * base.business)
        )
        return "degraded" if degraded else "healthy"
