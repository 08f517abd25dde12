"""End to end: the frontend's click log and CAPI events meet in the attribution job (ADS-2233)."""

from ad_ranking import attribute_conversions
from ad_ranking.clicks import clicks_from_log
from capi_pipeline import ConversionIngestor, InMemoryEventStore

CLICK = 1_772_361_840

LOG = [
    {"kind": "impression", "ad_id": "ad-a", "ts_ms": CLICK * 1000 - 4000},
    {"kind": "click", "click_id": "clk-1", "ad_id": "ad-a", "ts_ms": CLICK * 1000 + 120},
    {"kind": "click", "click_id": "clk-2", "ad_id": "ad-b", "ts_ms": (CLICK + 60) * 1000},
    {"kind": "click", "click_id": "clk-3", "ad_id": "ad-c", "ts": CLICK + 90},
]


def test_logged_clicks_get_their_conversions():
    clicks = clicks_from_log(LOG)
    assert [(c.click_id, c.click_time) for c in clicks] == [
        ("clk-1", CLICK), ("clk-2", CLICK + 60), ("clk-3", CLICK + 90)]
    store = InMemoryEventStore()
    ConversionIngestor(store).ingest([
        {"event_id": "e1", "event_name": "Purchase", "event_time": CLICK + 3600, "click_id": "clk-1"},
        {"event_id": "e2", "event_name": "Lead", "event_time": (CLICK + 7200) * 1000,
         "click_id": "clk-2", "source": "pixel"},
        {"event_id": "e3", "event_name": "Purchase", "event_time": CLICK + 86_400,
         "click_id": "clk-3"},
    ])
    assert attribute_conversions(clicks, store.all_events()) == {"ad-a": 1, "ad-b": 1, "ad-c": 1}
