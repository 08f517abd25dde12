"""Log lines rendered from state: routine noise, fault symptoms and operations, per minute."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from operator import itemgetter
from typing import NamedTuple

from . import noise
from .clock import stamps
from .faults import Fault
from .scenarios.spec import ScenarioSpec
from .telemetry import Telemetry
from .world import World, WorldEvent

LEVELS = ("DEBUG", "INFO", "WARN", "ERROR", "FATAL")
_PADDED = {level: f"{level:<5}" for level in LEVELS}  # a read renders dozens of lines
_EVENT_LEVEL = {
    "deploy": "INFO",
    "rollback": "WARN",
    "restart": "WARN",
    "scale": "INFO",
    "migration_rollback": "WARN",
    "hotfix": "INFO",
}
# About 150 bytes a line (the tuple, its timestamp, a routine text): a few services' windows.
_MEMO_LINES = 320


class LogLine(NamedTuple):
    """One rendered log line.

    A named tuple rather than a frozen dataclass: reads build thousands of them, and a tuple is
    built several times faster.
    """

    minute: int
    second: int
    level: str
    service: str
    text: str
    timestamp: str

    def render(self) -> str:
        """The line as a log viewer shows it."""
        return f"{self.timestamp} {_PADDED[self.level]} {self.service}: {self.text}"


class ServedLine(NamedTuple):
    """A request of the world's production traffic as a service logged it (see traffic.py)."""

    at_minute: float
    service: str
    level: str
    text: str


class LogRenderer:
    """Renders a service's log for a window of minutes from the current state.

    A minute's lines depend only on the seed, the minute and the state of the world and the
    faults, so they are memoised per (service, minute) while the telemetry's version stands: as
    the clock moves on, a read re-renders only the minutes it has not seen. The memo is bounded
    by a line count so an idle episode stays small.
    """

    __slots__ = (
        "_events",
        "_faults",
        "_memo",
        "_memo_lines",
        "_routine",
        "_seed",
        "_seeded",
        "_served",
        "_start",
        "_telemetry",
        "_version",
        "_world",
    )

    def __init__(
        self,
        spec: ScenarioSpec,
        seed: int,
        start: datetime,
        world: World,
        faults: Sequence[Fault],
        telemetry: Telemetry,
        served: Sequence[ServedLine] = (),
    ) -> None:
        self._seed = seed
        # the episode's own list, appended to as traffic runs (every run bumps the version)
        self._served = served
        self._telemetry = telemetry
        self._start = start
        self._world = world
        self._faults = tuple(faults)
        self._routine = {s.name: _templates(s.logs) for s in spec.services}
        # Built lazily: an episode nobody reads the logs of pays nothing for them.
        self._memo: dict[tuple[str, int], tuple[LogLine, ...]] = {}
        self._memo_lines = 0
        self._events: dict[tuple[str, int], list[WorldEvent]] | None = None
        self._version = telemetry.version
        self._seeded: dict[int, int] = {}

    def lines(self, service: str, first_minute: int, last_minute: int) -> list[LogLine]:
        """Every line `service` logged in minutes first..last inclusive, in time order."""
        out: list[LogLine] = []
        for minute in range(first_minute, last_minute + 1):
            out.extend(self.minute(service, minute))
        return out

    def tail(
        self,
        service: str,
        first_minute: int,
        last_minute: int,
        count: int,
        keep: Callable[[LogLine], bool] | None = None,
    ) -> list[LogLine]:
        """The newest `count` lines of minutes first..last that `keep` accepts, in time order.

        The same as filtering `lines` and keeping its last `count`, but it stops reading back
        as soon as it has enough.
        """
        chunks: list[Sequence[LogLine]] = []
        found = 0
        for minute in range(last_minute, first_minute - 1, -1):
            chunk: Sequence[LogLine] = self.minute(service, minute)
            if keep is not None:
                chunk = [line for line in chunk if keep(line)]
            if chunk:
                chunks.append(chunk)
                found += len(chunk)
                if found >= count:
                    break
        out = [line for chunk in reversed(chunks) for line in chunk]
        return out[-count:] if found > count else out

    def minute(self, service: str, minute: int) -> tuple[LogLine, ...]:
        """The lines `service` logged during one minute, in time order."""
        if self._version != self._telemetry.version:
            # The world or a fault changed: every memoised minute may read differently now.
            self._memo.clear()
            self._memo_lines = 0
            self._events = None
            self._version = self._telemetry.version
        key = (service, minute)
        lines = self._memo.pop(key, None)
        if lines is None:
            lines = self._render_minute(service, minute)
            self._memo_lines += len(lines)
            while self._memo and self._memo_lines > _MEMO_LINES:
                # Least recently read first (reinsertion keeps the dict in that order).
                self._memo_lines -= len(self._memo.pop(next(iter(self._memo))))
        self._memo[key] = lines
        return lines

    def _render_minute(self, service: str, minute: int) -> tuple[LogLine, ...]:
        out: list[LogLine] = []
        stream = _stream(service)
        at = stamps(self._start, minute)
        # A service that is down serves nothing, so it logs no routine traffic.
        if self._telemetry.value(service, "error_rate", minute) < 0.5:
            out.extend(self._routine_lines(service, minute, stream, at))
        for index, fault in enumerate(self._faults):
            strength = fault.strength(minute)
            for block_no, block in enumerate(fault.spec.logs):
                if block.service != service or strength < block.min_strength:
                    continue
                sec = int(self._unit(stream ^ (index * 31 + block_no), minute) * 50)
                when = at(sec)
                out.extend(
                    LogLine(minute, sec, block.level, service, text, when) for text in block.lines
                )
        for served in self._served:
            if served.service == service and int(served.at_minute // 1) == minute:
                sec = int((served.at_minute - minute) * 60)
                out.append(LogLine(minute, sec, served.level, service, served.text, at(sec)))
        for event in self._events_at(service, minute):
            sec = int((event.at_minute - minute) * 60)
            level = _EVENT_LEVEL.get(event.kind, "INFO")
            text = f"{event.text} (by {event.by})"
            out.append(LogLine(minute, sec, level, service, text, at(sec)))
        # Stable: lines of the same second keep the order routine, faults, events.
        out.sort(key=_second)
        return tuple(out)

    def _unit(self, stream: int, index: int) -> float:
        """`noise.unit(seed, stream, index)`, with the seed's half of the work done once."""
        seeded = self._seeded.get(stream)
        if seeded is None:
            seeded = self._seeded[stream] = noise.seeded(self._seed, stream)
        return noise.unit_at(seeded, index)

    def _events_at(self, service: str, minute: int) -> list[WorldEvent]:
        if self._events is None:
            # Operations add events, and every operation bumps the version, which drops this.
            self._events = {}
            for event in self._world.events:
                at = (event.service, int(event.at_minute // 1))
                self._events.setdefault(at, []).append(event)
        return self._events.get((service, minute), [])

    def _routine_lines(
        self, service: str, minute: int, stream: int, at: Callable[[int], str]
    ) -> list[LogLine]:
        templates = self._routine.get(service) or ()
        if not templates:
            return []
        count = 1 + int(self._unit(stream, minute * 7) * 2)
        lines = []
        for k in range(count):
            pick = self._unit(stream, minute * 7 + k + 1)
            level, template = templates[int(pick * len(templates))]
            r = self._unit(stream ^ 0xABC, minute * 7 + k)
            text = template.format_map(
                {"n": 200 + int(r * 1800), "ratio": f"{0.8 + r * 0.19:.2f}", "ms": 5 + int(r * 90)}
            )
            sec = int(r * 59)
            lines.append(LogLine(minute, sec, level, service, text, at(sec)))
        return lines


_second = itemgetter(1)  # LogLine.second


@lru_cache(maxsize=1024)
def _stream(service: str) -> int:
    return noise.key("logs", service)


@lru_cache(maxsize=1024)
def _templates(logs: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(level, template) per routine template; shared by every episode of a topology."""
    return tuple(_split_level(t) for t in logs)


def _split_level(template: str) -> tuple[str, str]:
    head, _, rest = template.partition(" ")
    return (head, rest) if head in LEVELS else ("INFO", template)
