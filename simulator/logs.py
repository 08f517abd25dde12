"""Log lines rendered from state: routine noise, fault symptoms and operations, per minute."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from metasre.simulator import noise
from metasre.simulator.clock import stamp
from metasre.simulator.faults import Fault
from metasre.simulator.scenarios.spec import ScenarioSpec
from metasre.simulator.telemetry import Telemetry
from metasre.simulator.world import World

LEVELS = ("DEBUG", "INFO", "WARN", "ERROR", "FATAL")
_EVENT_LEVEL = {
    "deploy": "INFO",
    "rollback": "WARN",
    "restart": "WARN",
    "scale": "INFO",
    "migration_rollback": "WARN",
    "hotfix": "INFO",
}


@dataclass(frozen=True, slots=True)
class LogLine:
    """One rendered log line."""

    minute: int
    second: int
    level: str
    service: str
    text: str
    timestamp: str

    def render(self) -> str:
        """The line as a log viewer shows it."""
        return f"{self.timestamp} {self.level:<5} {self.service}: {self.text}"


class LogRenderer:
    """Renders a service's log for a window of minutes from the current state."""

    __slots__ = ("_faults", "_routine", "_seed", "_start", "_telemetry", "_world")

    def __init__(
        self,
        spec: ScenarioSpec,
        seed: int,
        start: datetime,
        world: World,
        faults: Sequence[Fault],
        telemetry: Telemetry,
    ) -> None:
        self._seed = seed
        self._telemetry = telemetry
        self._start = start
        self._world = world
        self._faults = tuple(faults)
        self._routine = {s.name: [_split_level(t) for t in s.logs] for s in spec.services}

    def lines(self, service: str, first_minute: int, last_minute: int) -> list[LogLine]:
        """Every line `service` logged in minutes first..last inclusive, in time order."""
        out: list[LogLine] = []
        stream = noise.key("logs", service)
        for minute in range(first_minute, last_minute + 1):
            # A service that is down serves nothing, so it logs no routine traffic.
            if self._telemetry.value(service, "error_rate", minute) < 0.5:
                out.extend(self._routine_lines(service, minute, stream))
            for index, fault in enumerate(self._faults):
                strength = fault.strength(minute)
                for block_no, block in enumerate(fault.spec.logs):
                    if block.service != service or strength < block.min_strength:
                        continue
                    sec = int(noise.unit(self._seed, stream ^ (index * 31 + block_no), minute) * 50)
                    when = stamp(self._start, minute, sec)
                    out.extend(
                        LogLine(minute, sec, block.level, service, text, when)
                        for text in block.lines
                    )
        for event in self._world.events:
            m = int(event.at_minute // 1)
            if event.service == service and first_minute <= m <= last_minute:
                sec = int((event.at_minute - m) * 60)
                level = _EVENT_LEVEL.get(event.kind, "INFO")
                text = f"{event.text} (by {event.by})"
                out.append(LogLine(m, sec, level, service, text, stamp(self._start, m, sec)))
        out.sort(key=lambda line: (line.minute, line.second))
        return out

    def _routine_lines(self, service: str, minute: int, stream: int) -> list[LogLine]:
        templates = self._routine.get(service) or []
        if not templates:
            return []
        count = 1 + int(noise.unit(self._seed, stream, minute * 7) * 2)
        lines = []
        for k in range(count):
            pick = noise.unit(self._seed, stream, minute * 7 + k + 1)
            level, template = templates[int(pick * len(templates))]
            r = noise.unit(self._seed, stream ^ 0xABC, minute * 7 + k)
            text = template.format_map(
                {"n": 200 + int(r * 1800), "ratio": f"{0.8 + r * 0.19:.2f}", "ms": 5 + int(r * 90)}
            )
            sec = int(r * 59)
            lines.append(
                LogLine(minute, sec, level, service, text, stamp(self._start, minute, sec))
            )
        return lines


def _split_level(template: str) -> tuple[str, str]:
    head, _, rest = template.partition(" ")
    return (head, rest) if head in LEVELS else ("INFO", template)
