"""Alerts: threshold rules over telemetry, evaluated at a minute."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import noise
from .scenarios.spec import AlertRule
from .telemetry import Telemetry

_LOOKBACK = 180


@dataclass(frozen=True, slots=True)
class Alert:
    """A firing alert."""

    id: str
    service: str
    severity: str
    metric: str
    value: float
    threshold: float
    summary: str
    since_minute: int
    """The first minute of the current firing streak."""


def _fires(rule: AlertRule, value: float) -> bool:
    if rule.above is not None:
        return value > rule.above
    return rule.below is not None and value < rule.below


class AlertRules:
    """A scenario's alert rules, evaluated over an episode's telemetry.

    Finding when a streak began can mean reading three hours back per rule, and the pager asks
    after every call, so each rule remembers its verdict at the last minute it was asked about:
    a later minute then reads back only to that one. The memory holds while the telemetry's
    version stands, since a change to the world or a fault rewrites the history.
    """

    __slots__ = ("_ids", "_last", "_rules", "_streaks", "_telemetry", "_version")

    def __init__(self, rules: Sequence[AlertRule], telemetry: Telemetry) -> None:
        self._rules = tuple(rules)
        self._telemetry = telemetry
        self._ids = tuple(
            f"ALT-{noise.key(r.service, r.metric, r.summary) % 9000 + 1000}" for r in self._rules
        )
        self._version = telemetry.version
        # Per rule: (minute, first minute of the streak then, or None when it was quiet).
        self._streaks: list[tuple[int, int | None] | None] = [None] * len(self._rules)
        self._last: tuple[int, tuple[Alert, ...]] | None = None

    def memory(self) -> tuple[tuple[int, int | None] | None, ...]:
        """What the rules remember of their streaks (see `recall`)."""
        return tuple(self._streaks)

    def recall(self, memory: tuple[tuple[int, int | None] | None, ...]) -> None:
        """Take the streak memory `memory()` gave for the same rules over the same history.

        The same history: another episode of the same scenario and seed, at its start.
        """
        self._streaks = list(memory)

    def firing(self, minute: int) -> tuple[Alert, ...]:
        """Alerts firing at `minute`, most severe first, then oldest first."""
        if self._version != self._telemetry.version:
            self._version = self._telemetry.version
            self._streaks = [None] * len(self._rules)
            self._last = None
        if self._last is not None and self._last[0] == minute:
            return self._last[1]
        out = []
        for index, rule in enumerate(self._rules):
            value = self._telemetry.value(rule.service, rule.metric, minute)
            if not _fires(rule, value):
                self._streaks[index] = (minute, None)
                continue
            since = self._since(index, rule, minute)
            self._streaks[index] = (minute, since)
            threshold = rule.above if rule.above is not None else rule.below
            assert threshold is not None
            out.append(
                Alert(
                    self._ids[index],
                    rule.service,
                    rule.severity,
                    rule.metric,
                    value,
                    threshold,
                    rule.summary,
                    since,
                )
            )
        out.sort(key=lambda a: (a.severity, a.since_minute, a.id))
        alerts = tuple(out)
        self._last = (minute, alerts)
        return alerts

    def _since(self, index: int, rule: AlertRule, minute: int) -> int:
        """The first minute of the streak firing at `minute`, at most _LOOKBACK minutes back."""
        floor = minute - _LOOKBACK
        known = self._streaks[index]
        if known is not None and known[0] >= minute:
            known = None  # only a verdict from before `minute` can end the walk back early
        since = minute
        while since > floor:
            if known is not None and since - 1 == known[0]:
                # The streak reaches back to the remembered minute, so it began where that
                # minute's did (or just after it, if it was quiet), within this lookback.
                if known[1] is not None:
                    since = max(known[1], floor)
                break
            value = self._telemetry.value(rule.service, rule.metric, since - 1)
            if not _fires(rule, value):
                break
            since -= 1
        return since
