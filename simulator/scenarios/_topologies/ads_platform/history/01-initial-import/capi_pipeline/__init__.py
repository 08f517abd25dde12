"""Conversions API ingest: validates and normalises advertiser conversion events."""

from capi_pipeline.ingest import ConversionIngestor, IngestResult
from capi_pipeline.normalize import (
    ConversionEvent,
    InvalidEvent,
    normalize_event,
    normalize_timestamp,
)
from capi_pipeline.store import EventStore, InMemoryEventStore

__all__ = [
    "ConversionEvent",
    "ConversionIngestor",
    "EventStore",
    "InMemoryEventStore",
    "IngestResult",
    "InvalidEvent",
    "normalize_event",
    "normalize_timestamp",
]
