"""Batch ingest: validate, normalise, deduplicate and store conversion events."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from capi_pipeline import config
from capi_pipeline.currency import to_usd_micros
from capi_pipeline.normalize import ConversionEvent, InvalidEvent, normalize_event
from capi_pipeline.store import EventStore

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What happened to one posted batch."""

    accepted: int
    """Events stored for the first time."""
    duplicates: int
    """Valid events already stored (advertiser retries)."""
    rejected: tuple[str, ...]
    """One reason per invalid event, in batch order."""
    value_usd_micros: int = 0
    """Total value of the batch's valid events, in micro-dollars."""


class ConversionIngestor:
    """Entry point of POST /v1/events: one call per advertiser batch."""

    def __init__(self, store: EventStore) -> None:
        self._store = store

    def ingest(self, batch: Sequence[Mapping[str, Any]]) -> IngestResult:
        """Normalise and store a batch; invalid events are reported, not raised.

        Raises:
            InvalidEvent: the batch itself is larger than config.MAX_BATCH_SIZE.
        """
        if len(batch) > config.MAX_BATCH_SIZE:
            raise InvalidEvent(
                f"batch of {len(batch)} events exceeds the limit of {config.MAX_BATCH_SIZE}"
            )
        events: list[ConversionEvent] = []
        rejected: list[str] = []
        for raw in batch:
            try:
                events.append(normalize_event(raw))
            except InvalidEvent as exc:
                rejected.append(str(exc))
                logger.warning("capi event rejected", extra={"reason": str(exc)})
        inserted = self._store.insert_events(events)
        value = sum(to_usd_micros(e.value_micros, e.currency) for e in events)
        logger.info(
            "capi batch ingested",
            extra={"accepted": inserted, "rejected": len(rejected), "size": len(batch)},
        )
        return IngestResult(
            accepted=inserted,
            duplicates=len(events) - inserted,
            rejected=tuple(rejected),
            value_usd_micros=value,
        )
