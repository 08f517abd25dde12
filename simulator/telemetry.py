"""Telemetry driven by state: every service's signals per simulated minute."""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from . import noise
from .faults import Fault
from .scenarios.spec import METRICS, Metric, ScenarioSpec
from .world import World

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
# The value memo: at most _SLOTS values (8 bytes each, an hour of a large dashboard), grown back
# by _GROW_BACK minutes at a time, and never by more than _MAX_GROW minutes for one value.
_SLOTS = 4096
_GROW_BACK = 32
_MAX_GROW = 512


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


@dataclass(frozen=True, slots=True)
class _Plan:
    """What one signal of one service is made of."""

    service: str
    metric: Metric
    base: float
    amplitude: float
    """Relative noise."""
    stream: int
    """The noise stream (before the seed)."""
    effects: tuple[tuple[int, float], ...]
    """Each fault (by index) that moves this signal, with what it adds at full strength."""
    capped: bool
    scales_with_replicas: bool
    fails_when_down: bool


class _Layout:
    """Every signal's plan for one scenario spec, worked out once and shared by its episodes."""

    __slots__ = ("baselines", "index", "plans")

    def __init__(self, spec: ScenarioSpec) -> None:
        self.baselines = {s.name: s.baseline for s in spec.services}
        self.plans = tuple(
            _shared_plan(
                _Plan(
                    s.name,
                    m,
                    float(getattr(s.baseline, m)),
                    _NOISE[m],
                    noise.key(s.name, m),
                    tuple(
                        (i, effect[m])
                        for i, f in enumerate(spec.faults)
                        if (effect := f.effects.get(s.name)) and m in effect
                    ),
                    m in _CAPPED,
                    m == "cpu",
                    m == "error_rate",
                )
            )
            for s in spec.services
            for m in METRICS
        )
        names = tuple(p.service for p in self.plans[:: len(METRICS)])
        index = _INDEXES.get(names)
        if index is None:
            index = {(p.service, p.metric): i for i, p in enumerate(self.plans)}
            _INDEXES[names] = index
            if len(_INDEXES) > _POOL_LIMIT:
                _INDEXES.pop(next(iter(_INDEXES)))
        self.index: dict[tuple[str, str], int] = index


# The seeds of a family mostly lay out the same signals: a plan (frozen) and an index (never
# written after it is built) serve every layout that has them, instead of a copy per seed.
_PLANS: dict[_Plan, _Plan] = {}
_INDEXES: dict[tuple[str, ...], dict[tuple[str, str], int]] = {}
_POOL_LIMIT = 16384


def _shared_plan(plan: _Plan) -> _Plan:
    known = _PLANS.setdefault(plan, plan)
    if len(_PLANS) > _POOL_LIMIT:
        _PLANS.clear()
        _PLANS[plan] = plan
    return known


class _SameSpec:
    """A spec as a cache key, by identity (specs are unhashable, and shared while cached)."""

    __slots__ = ("spec",)

    def __init__(self, spec: ScenarioSpec) -> None:
        self.spec = spec

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SameSpec) and other.spec is self.spec

    def __hash__(self) -> int:
        return id(self.spec)


@lru_cache(maxsize=64)
def _layout(key: _SameSpec) -> _Layout:
    return _Layout(key.spec)


class _Memo:
    """Computed values by signal and minute: an array of floats per signal, NaN where unknown.

    Eight bytes a value where a dict entry costs about seventy, so a whole episode's dashboard
    fits in a few kilobytes. A budget of slots bounds it (when spent, everything is dropped and
    recomputed on demand), and a value far outside its signal's span is not kept at all.
    """

    __slots__ = ("_slots", "first", "rows")

    def __init__(self, signals: int) -> None:
        self.first = [0] * signals
        """The minute of each row's first slot."""
        self.rows: list[array[float] | None] = [None] * signals
        """Per signal, its values from `first` on (read them in place: a call costs more)."""
        self._slots = 0

    def put(self, signal: int, minute: int, value: float) -> None:
        """Remember `value` (never NaN) for `signal` at `minute`."""
        row = self.rows[signal]
        first = self.first[signal]
        if row is None:
            grow = 1
        elif minute < first:
            # Streaks and windows are read backwards a minute at a time: grow by a block.
            grow = max(first - minute, _GROW_BACK)
        else:
            grow = max(0, minute - first - len(row) + 1)
        if grow > _MAX_GROW:
            return
        if self._slots + grow > _SLOTS:
            self.rows = [None] * len(self.rows)
            self._slots, row = 0, None
        if row is None:
            self.rows[signal] = array("d", (value,))
            self.first[signal] = minute
            self._slots += 1
            return
        if minute < first:
            row[0:0] = array("d", (math.nan,)) * grow
            first = self.first[signal] = first - grow
        elif grow:
            row.extend(array("d", (math.nan,)) * grow)
        self._slots += grow
        row[minute - first] = value


class Telemetry:
    """Computes signals from the baseline, the faults' strength and the world's state.

    A value is a pure function of (seed, service, metric, minute) and the fault and world
    history, so any window can be queried at any time; values are memoised until `invalidate`.
    """

    __slots__ = ("_faults", "_layout", "_memo", "_noise", "_version", "_world")

    def __init__(
        self,
        spec: ScenarioSpec,
        seed: int,
        world: World,
        faults: Sequence[Fault],
        version: int = 0,
    ) -> None:
        """`version`: the changes already counted (a rebuilt reader carries its count on)."""
        self._world = world
        self._faults = tuple(faults)
        if len(self._faults) != len(spec.faults) or any(
            f.spec is not s for f, s in zip(self._faults, spec.faults, strict=False)
        ):
            raise ValueError("Telemetry needs one Fault per fault of the spec, in the spec's order")
        self._layout = _layout(_SameSpec(spec))
        self._noise = array("Q", [noise.seeded(seed, p.stream) for p in self._layout.plans])
        # Values repeat across calls (a query's window slides a minute at a time, every tool
        # reads the signals now), so they are memoised until the world or a fault changes.
        self._memo = _Memo(len(self._noise))
        self._version = version

    def with_faults(self, faults: Sequence[Fault]) -> Telemetry:
        """The same world and noise over another course of the faults, memoised apart.

        The grader's soak reads the signals of copied faults (`Fault.copy`) this way; the
        episode's own values and memo are untouched.
        """
        twin = Telemetry.__new__(Telemetry)
        twin._world = self._world
        twin._faults = tuple(faults)
        if len(twin._faults) != len(self._faults) or any(
            a.spec is not b.spec for a, b in zip(twin._faults, self._faults, strict=True)
        ):
            raise ValueError("with_faults needs one Fault per fault of the spec, in its order")
        twin._layout = self._layout
        twin._noise = self._noise
        twin._memo = _Memo(len(self._noise))
        twin._version = self._version
        return twin

    @property
    def version(self) -> int:
        """How many times the world or a fault has changed (counted by `invalidate`).

        Anything derived from the world's state or the faults' course (log lines, alert streaks,
        dashboard rows) may be memoised under this number: it is valid while the number stands.
        """
        return self._version

    def invalidate(self) -> None:
        """Forget memoised values: call after any change to the world or a fault's course."""
        self._memo = _Memo(len(self._noise))
        self._version += 1

    def value(self, service: str, metric: Metric, minute: int) -> float:
        """The value of one signal at one minute."""
        return self._value(self._layout.index[(service, metric)], minute)

    def _value(self, signal: int, minute: int) -> float:
        memo = self._memo
        row = memo.rows[signal]
        if row is not None:
            slot = minute - memo.first[signal]
            if 0 <= slot < len(row):
                value = row[slot]
                if value == value:  # NaN marks a minute not computed yet
                    return value
        value = self._compute(signal, minute)
        memo.put(signal, minute, value)
        return value

    def _compute(self, signal: int, minute: int) -> float:
        # The arithmetic, and its order, is the contract: recorded episodes replay bit for bit.
        plan = self._layout.plans[signal]
        base = plan.base
        state = self._world.services[plan.service]
        if plan.scales_with_replicas and state.replicas > 0:
            # The same traffic spread over more replicas costs each of them less.
            base = base * state.initial_replicas / state.replicas
        jitter = noise.signed_at(self._noise[signal], minute)
        value = base * (1.0 + plan.amplitude * jitter)
        for fault, delta in plan.effects:
            value += delta * self._faults[fault].strength(minute)
        for disruption in self._world.disruptions:
            if (
                disruption.service == plan.service
                and disruption.metric == plan.metric
                and disruption.covers(minute)
            ):
                value += disruption.delta
        if plan.fails_when_down and state.replicas == 0:
            value = 1.0
        # max(0.0, value) and min(1.0, value), spelled out (the same result, -0.0 and NaN too).
        value = value if value > 0.0 else 0.0
        if plan.capped and not value < 1.0:
            value = 1.0
        return round(value, 4)

    def signals(self, service: str, minute: int) -> ServiceSignals:
        """Every signal of `service` at `minute`, with its health."""
        # A service's signals are laid out side by side, in METRICS order.
        first = self._layout.index[(service, METRICS[0])]
        v = {m: self._value(first + i, minute) for i, m in enumerate(METRICS)}
        return ServiceSignals(service, minute, health=self._health(service, v), **v)

    def series(self, service: str, metric: Metric, start: int, end: int) -> list[tuple[int, float]]:
        """(minute, value) pairs for minutes start..end inclusive."""
        signal = self._layout.index[(service, metric)]
        return [(m, self._value(signal, m)) for m in range(start, end + 1)]

    def _health(self, service: str, v: dict[Metric, float]) -> Health:
        base = self._layout.baselines[service]
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
