"""Alerts: threshold rules over telemetry, evaluated at a minute."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from metasre.simulator import noise
from metasre.simulator.scenarios.spec import AlertRule
from metasre.simulator.telemetry import Telemetry

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


def firing(rules: Sequence[AlertRule], telemetry: Telemetry, minute: int) -> list[Alert]:
    """Alerts firing at `minute`, most severe first, then oldest first."""
    out = []
    for rule in rules:
        value = telemetry.value(rule.service, rule.metric, minute)
        if not _fires(rule, value):
            continue
        since = minute
        while since > minute - _LOOKBACK and _fires(
            rule, telemetry.value(rule.service, rule.metric, since - 1)
        ):
            since -= 1
        threshold = rule.above if rule.above is not None else rule.below
        assert threshold is not None
        ident = f"ALT-{noise.key(rule.service, rule.metric, rule.summary) % 9000 + 1000}"
        out.append(
            Alert(
                ident,
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
    return out
