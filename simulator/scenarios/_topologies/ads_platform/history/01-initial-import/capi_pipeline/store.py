"""Where normalised events go: the conversion_events table, behind a small interface."""

from __future__ import annotations

from typing import Iterable, Protocol

from capi_pipeline.normalize import ConversionEvent

INSERT_EVENT_SQL = (
    "INSERT INTO conversion_events"
    " (event_id, event_name, event_time, click_id, value_micros, currency)"
    " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING"
)


class EventStore(Protocol):
    """Storage for normalised conversion events."""

    def insert_events(self, events: Iterable[ConversionEvent]) -> int:
        """Insert events not stored yet (by event_id); return how many were new."""
        ...

    def all_events(self) -> list[ConversionEvent]:
        """Every stored event, oldest first."""
        ...


class InMemoryEventStore:
    """EventStore kept in a dict, with the table's ON CONFLICT semantics.

    The local dev server and the tests use it; production uses the postgres adapter,
    which runs INSERT_EVENT_SQL.
    """

    def __init__(self) -> None:
        self._rows: dict[str, ConversionEvent] = {}

    def insert_events(self, events: Iterable[ConversionEvent]) -> int:
        inserted = 0
        for event in events:
            if event.event_id not in self._rows:
                self._rows[event.event_id] = event
                inserted += 1
        return inserted

    def all_events(self) -> list[ConversionEvent]:
        return sorted(self._rows.values(), key=lambda e: (e.event_time, e.event_id))
