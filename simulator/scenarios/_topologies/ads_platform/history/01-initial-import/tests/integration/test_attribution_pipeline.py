"""End to end: raw CAPI events -> capi_pipeline ingest -> ad_ranking attribution and features."""

from ad_ranking import AdStats, Click, attribute_conversions, build_features
from capi_pipeline import ConversionIngestor, InMemoryEventStore

HOUR = 3600
DAY = 24 * HOUR
CLICK_TIME = 1_717_000_000

CLICKS = [
    Click("clk-a1", "ad-a", CLICK_TIME),
    Click("clk-a2", "ad-a", CLICK_TIME + 2 * HOUR),
    Click("clk-b1", "ad-b", CLICK_TIME),
]

RAW_EVENTS = [
    {"event_id": "s-1", "event_name": "Purchase", "event_time": CLICK_TIME + 2 * HOUR,
     "click_id": "clk-a1", "value": 42.0, "currency": "USD"},
    {"event_id": "s-2", "event_name": "Lead", "event_time": CLICK_TIME + 3 * DAY,
     "click_id": "clk-a2"},
    {"event_id": "s-3", "event_name": "Purchase", "event_time": str(CLICK_TIME + 6 * DAY),
     "click_id": "clk-b1", "value": "12.50", "currency": "gbp"},
    # outside the window, before the click, no click: never attributed
    {"event_id": "s-4", "event_name": "Purchase", "event_time": CLICK_TIME + 8 * DAY,
     "click_id": "clk-b1"},
    {"event_id": "s-7", "event_name": "Purchase", "event_time": CLICK_TIME - HOUR,
     "click_id": "clk-a1"},
    {"event_id": "s-5", "event_name": "Subscribe", "event_time": CLICK_TIME + HOUR},
    # invalid: rejected at ingest
    {"event_id": "s-6", "event_name": "PageView", "event_time": CLICK_TIME + HOUR,
     "click_id": "clk-a1"},
]


def _ingest():
    store = InMemoryEventStore()
    result = ConversionIngestor(store).ingest(RAW_EVENTS)
    return store, result


def test_ingest_stores_every_valid_event_once():
    store, result = _ingest()
    assert result.accepted == 6 and len(result.rejected) == 1, result
    assert len(store.all_events()) == 6


def test_conversions_inside_the_window_are_attributed():
    store, _ = _ingest()
    counts = attribute_conversions(CLICKS, store.all_events())
    assert counts == {"ad-a": 2, "ad-b": 1}, f"expected 2 for ad-a and 1 for ad-b, got {counts}"


def test_attributed_conversions_raise_pcvr():
    store, _ = _ingest()
    counts = attribute_conversions(CLICKS, store.all_events())
    rows = {
        ad_id: build_features(AdStats(ad_id, 5_000, 50, counts.get(ad_id, 0)))
        for ad_id in ("ad-a", "ad-b", "ad-z")
    }
    assert rows["ad-a"]["pcvr"] > rows["ad-b"]["pcvr"] > rows["ad-z"]["pcvr"], rows
