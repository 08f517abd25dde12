"""End to end, per integration source: raw events -> ingest -> attribution to their clicks.

Each source writes event_time its own way (capi_pipeline/sources.py); whatever the source, a
conversion an hour or two days after its click must be attributed to that click.
"""

from ad_ranking import Click, attribute_conversions
from capi_pipeline import ConversionIngestor, InMemoryEventStore

HOUR = 3600
CLICK = 1_772_361_840  # 2026-03-01T10:44:00Z


def _events(source, when):
    """Two conversions, 1 h and 2 days after the click, written the way `source` does."""
    return [dict(when(CLICK + delay), event_id=f"{source}-{n}", event_name="Purchase",
                 click_id="clk-1", source=source)
            for n, delay in enumerate((HOUR, 48 * HOUR))]


SOURCES = {
    "server": lambda t: {"event_time": t},
    "pixel": lambda t: {"event_time": t * 1000 + 250},
    "app_ios": lambda t: {"event_time": t - 978_307_200 + 0.25},
    "app_android": lambda t: {"event_time": (t - 180 * 60) * 1000, "tz_offset_minutes": -180},
    "offline": lambda t: {"event_time": _iso(t, -5), "account_id": "act_2044"},
    "crm": lambda t: {"event_time": t * 1_000_000},
    "commerce_partner": lambda t: {"event_time": t, "export_time": t + 6 * 24 * HOUR},
}


def _iso(t, offset_hours):
    from datetime import datetime, timedelta, timezone

    zone = timezone(timedelta(hours=offset_hours))
    return datetime.fromtimestamp(t, zone).isoformat()


def test_every_source_lands_in_the_attribution_window():
    for source, when in SOURCES.items():
        store = InMemoryEventStore()
        result = ConversionIngestor(store).ingest(_events(source, when))
        assert result.accepted == 2 and not result.rejected, (source, result)
        times = sorted(event.event_time for event in store.all_events())
        assert times == [CLICK + HOUR, CLICK + 48 * HOUR], (source, times)
        counts = attribute_conversions([Click("clk-1", "ad-a", CLICK)], store.all_events())
        assert counts == {"ad-a": 2}, (source, counts)


def test_offline_local_times_use_the_account_time_zone():
    store = InMemoryEventStore()
    raw = {"event_id": "o-1", "event_name": "Purchase", "click_id": "clk-1", "source": "offline",
           "event_time": "2026-03-01T16:14:00", "account_id": "act_3107"}
    ConversionIngestor(store).ingest([raw])
    assert [e.event_time for e in store.all_events()] == [CLICK], store.all_events()
