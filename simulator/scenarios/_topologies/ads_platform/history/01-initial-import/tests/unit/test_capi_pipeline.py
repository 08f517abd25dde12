"""Unit tests for capi_pipeline: event validation, normalisation and batch ingest."""

from capi_pipeline import (
    ConversionIngestor,
    InMemoryEventStore,
    InvalidEvent,
    normalize_event,
    normalize_timestamp,
)


def _raw(**overrides):
    raw = {
        "event_id": "evt-1",
        "event_name": "Purchase",
        "event_time": 1_717_171_717,
        "click_id": "clk-1",
        "value": 19.99,
        "currency": "eur",
    }
    raw.update(overrides)
    return raw


def _raises_invalid(raw):
    try:
        normalize_event(raw)
    except InvalidEvent as exc:
        return str(exc)
    raise AssertionError(f"expected InvalidEvent for {raw!r}")


def test_timestamp_must_be_a_positive_number():
    assert normalize_timestamp("1717171717") == 1_717_171_717, "numeric strings are accepted"
    for bad in ("yesterday", None, 0, -5):
        try:
            normalize_timestamp(bad)
        except InvalidEvent:
            continue
        raise AssertionError(f"expected InvalidEvent for event_time={bad!r}")


def test_normalize_event_fills_every_field():
    event = normalize_event(_raw())
    assert event.event_id == "evt-1", event
    assert event.event_time == 1_717_171_717, event
    assert event.value_micros == 19_990_000, event
    assert event.currency == "EUR", "currency should be upper-cased"
    assert event.click_id == "clk-1", event


def test_missing_fields_are_named():
    message = _raises_invalid(_raw(event_name="", event_time=None))
    assert "event_name" in message and "event_time" in message, message


def test_unsupported_values_are_rejected():
    assert "event_name" in _raises_invalid(_raw(event_name="PageView"))
    assert "currency" in _raises_invalid(_raw(currency="XYZ"))
    assert "value" in _raises_invalid(_raw(value=-1))


def test_blank_click_id_is_none():
    assert normalize_event(_raw(click_id="  ")).click_id is None


def test_ingest_reports_duplicates_and_rejections():
    ingestor = ConversionIngestor(InMemoryEventStore())
    first = ingestor.ingest([_raw(), _raw(event_id="evt-2"), _raw(event_id="evt-3", value="ten")])
    assert (first.accepted, first.duplicates) == (2, 0), first
    assert len(first.rejected) == 1 and "evt-3" in first.rejected[0], first
    retry = ingestor.ingest([_raw()])
    assert (retry.accepted, retry.duplicates) == (0, 1), "a retried event_id is stored once"


def test_oversized_batch_is_refused():
    ingestor = ConversionIngestor(InMemoryEventStore())
    try:
        ingestor.ingest([_raw(event_id=f"e{i}") for i in range(1001)])
    except InvalidEvent as exc:
        assert "1001" in str(exc), exc
    else:
        raise AssertionError("a batch over MAX_BATCH_SIZE must be refused")
