"""Unit tests for the batch value in US dollars (ADS-2219)."""

from capi_pipeline import ConversionIngestor, InMemoryEventStore
from capi_pipeline.currency import to_usd_micros


def test_rates_are_exact():
    assert to_usd_micros(19_990_000, "EUR") == 21_589_200
    assert to_usd_micros(1_000_000, "USD") == 1_000_000
    assert to_usd_micros(5, "INR") == 0, "half to even: 0.06 micro-dollars round to 0"


def test_ingest_adds_up_the_batch_in_dollars():
    batch = [
        {"event_id": "a", "event_name": "Purchase", "event_time": 1_717_000_000,
         "value": 10, "currency": "gbp"},
        {"event_id": "b", "event_name": "Lead", "event_time": 1_717_000_000},
        {"event_id": "c", "event_name": "PageView", "event_time": 1_717_000_000, "value": 99},
    ]
    result = ConversionIngestor(InMemoryEventStore()).ingest(batch)
    assert (result.accepted, len(result.rejected)) == (2, 1), result
    assert result.value_usd_micros == 12_700_000, result
