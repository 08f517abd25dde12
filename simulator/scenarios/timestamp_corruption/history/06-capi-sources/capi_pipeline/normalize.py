"""Validation and normalisation of raw CAPI events into ConversionEvent records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from capi_pipeline import config, sources

REQUIRED_FIELDS = ("event_id", "event_name", "event_time")


class InvalidEvent(ValueError):
    """Raised when a raw event lacks a required field or carries a value we cannot normalise."""


@dataclass(frozen=True, slots=True)
class ConversionEvent:
    """One normalised conversion, as stored in the conversion_events table."""

    event_id: str
    """Advertiser-supplied id; retries of the same event carry the same id."""
    event_name: str
    """One of config.ALLOWED_EVENT_NAMES."""
    event_time: int
    """Epoch seconds (UTC) when the conversion happened on the advertiser's side."""
    click_id: str | None
    """The ad click the advertiser attributes this conversion to, if any."""
    value_micros: int
    """Conversion value in micro-units of `currency`."""
    currency: str
    """ISO 4217 code, upper case."""
    source: str = "server"
    """The integration that posted it (see capi_pipeline.sources)."""


def normalize_timestamp(raw: Any) -> int:
    """Return epoch seconds for an event time sent in seconds or in milliseconds.

    Raises:
        InvalidEvent: the value is not a positive number.
    """
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise InvalidEvent(f"event_time must be a number, got {raw!r}") from None
    if value <= 0:
        raise InvalidEvent(f"event_time must be positive, got {raw!r}")
    if value >= config.MILLIS_THRESHOLD:
        value /= 1000
    return int(value)


def normalize_event(raw: Mapping[str, Any]) -> ConversionEvent:
    """Validate one raw CAPI event and return its normalised form.

    Raises:
        InvalidEvent: a required field is missing or a value is unsupported; the message
            names the event and the field so the advertiser can fix their integration.
    """
    event_id = str(raw.get("event_id") or "").strip()
    missing = [name for name in REQUIRED_FIELDS if raw.get(name) in (None, "")]
    if missing:
        raise InvalidEvent(f"event {event_id or '?'}: missing {', '.join(missing)}")

    event_name = str(raw["event_name"]).strip()
    if event_name not in config.ALLOWED_EVENT_NAMES:
        raise InvalidEvent(f"event {event_id}: unsupported event_name {event_name!r}")

    currency = str(raw.get("currency") or config.DEFAULT_CURRENCY).strip().upper()
    if currency not in config.SUPPORTED_CURRENCIES:
        raise InvalidEvent(f"event {event_id}: unsupported currency {currency!r}")

    try:
        value = float(raw.get("value", 0) or 0)
    except (TypeError, ValueError):
        raise InvalidEvent(f"event {event_id}: value must be a number") from None
    if value < 0:
        raise InvalidEvent(f"event {event_id}: value must be >= 0, got {value}")

    click_id = str(raw.get("click_id") or "").strip() or None
    source = str(raw.get("source") or "server").strip()
    return ConversionEvent(
        event_id=event_id,
        event_name=event_name,
        event_time=_event_time(raw, event_id, source),
        click_id=click_id,
        value_micros=round(value * 1_000_000),
        currency=currency,
        source=source,
    )


def _event_time(raw: Mapping[str, Any], event_id: str, source: str) -> int:
    """Epoch seconds (UTC) of the event, read the way its source writes it.

    Raises:
        InvalidEvent: an unknown source, or an event_time its source's reader cannot read.
    """
    if source == "server":
        return normalize_timestamp(raw["event_time"])
    read = sources.ADAPTERS.get(source)
    if read is None:
        raise InvalidEvent(f"event {event_id}: unsupported source {source!r}")
    try:
        seconds = read(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidEvent(f"event {event_id}: unreadable event_time from {source}: {exc}") from None
    if seconds <= 0:
        raise InvalidEvent(f"event {event_id}: event_time must be positive, got {seconds}")
    return seconds
