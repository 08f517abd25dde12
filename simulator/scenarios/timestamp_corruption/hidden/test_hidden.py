"""Grader checks for meta-sre/timestamp-corruption-v1 (never shown to agents).

FAIL_TO_PASS: event times sent in epoch seconds (server-side integrations) stay seconds, and
their conversions are attributed again end to end. Any cut-off strictly between the largest
plausible epoch second and the smallest plausible epoch millisecond passes; the checks do not
pin one value. PASS_TO_PASS: milliseconds are still converted, bad times still rejected, and
ad_ranking's attribution window and ranking are unchanged (widening the window downstream is
not a fix).
"""

from ad_ranking import AdCandidate, AdStats, Click, attribute_conversions, build_features, rank_ads
from capi_pipeline import ConversionEvent, ConversionIngestor, InMemoryEventStore, InvalidEvent
from capi_pipeline import normalize_event, normalize_timestamp

HOUR = 3600
DAY = 24 * HOUR
CLICK_TIME = {{sample.click}}


# --- FAIL_TO_PASS -------------------------------------------------------------------------


def test_epoch_seconds_stay_seconds():
    # 2001-09-09, 2020-09-13, the incident's week, 2033-05-18 and 2096-10-02: all real seconds.
    for seconds in (1_000_000_000, 1_600_000_000, CLICK_TIME, 2_000_000_000, 4_000_000_000):
        assert normalize_timestamp(seconds) == seconds, (seconds, normalize_timestamp(seconds))
        assert normalize_timestamp(str(seconds)) == seconds, seconds
        assert normalize_timestamp(seconds + 0.75) == seconds, seconds
    event = normalize_event({"event_id": "srv-1", "event_name": "Purchase",
                             "event_time": CLICK_TIME + HOUR, "click_id": "clk-1"})
    assert event.event_time == CLICK_TIME + HOUR, event


def test_server_side_and_pixel_conversions_are_attributed():
    clicks = [Click("clk-1", "ad-x", CLICK_TIME), Click("clk-2", "ad-y", CLICK_TIME + HOUR),
              Click("clk-3", "ad-z", CLICK_TIME)]
    raw = [
        # server-side (seconds)
        {"event_id": "s1", "event_name": "Purchase", "event_time": CLICK_TIME + 40 * 60,
         "click_id": "clk-1", "value": 30, "currency": "usd"},
        {"event_id": "s2", "event_name": "Lead", "event_time": str(CLICK_TIME + 2 * DAY),
         "click_id": "clk-2"},
        {"event_id": "s3", "event_name": "Subscribe", "event_time": CLICK_TIME + 6 * DAY,
         "click_id": "clk-3"},
        {"event_id": "s4", "event_name": "Purchase", "event_time": CLICK_TIME + 9 * DAY,
         "click_id": "clk-3"},
        # pixel and SDKs (milliseconds)
        {"event_id": "p1", "event_name": "AddToCart", "event_time": (CLICK_TIME + 90) * 1000 + 7,
         "click_id": "clk-1"},
        {"event_id": "p2", "event_name": "Purchase", "event_time": (CLICK_TIME - 60) * 1000,
         "click_id": "clk-3"},
    ]
    store = InMemoryEventStore()
    result = ConversionIngestor(store).ingest(raw)
    assert result.accepted == 6 and not result.rejected, result
    counts = attribute_conversions(clicks, store.all_events())
    assert counts == {"ad-x": 2, "ad-y": 1, "ad-z": 1}, counts
    features = {ad: build_features(AdStats(ad, 1_000, 40, counts.get(ad, 0)))
                for ad in ("ad-x", "ad-y", "ad-q")}
    assert features["ad-x"]["pcvr"] > features["ad-y"]["pcvr"] > features["ad-q"]["pcvr"], features


# --- PASS_TO_PASS -------------------------------------------------------------------------


def test_epoch_milliseconds_still_become_seconds():
    for millis in (1_000_000_000_000, CLICK_TIME * 1000 + 999, 4_000_000_000_000):
        assert normalize_timestamp(millis) == millis // 1000, (millis, normalize_timestamp(millis))
    assert normalize_timestamp(str(CLICK_TIME * 1000 + 250)) == CLICK_TIME


def test_bad_event_times_still_rejected():
    for bad in (None, "", "yesterday", 0, -1, -CLICK_TIME):
        try:
            normalize_timestamp(bad)
        except InvalidEvent:
            continue
        raise AssertionError(f"event_time={bad!r} must be rejected")


def test_attribution_window_is_still_seven_days():
    clicks = [Click("k", "ad-a", CLICK_TIME)]
    inside = ConversionEvent("in", "Purchase", CLICK_TIME + 7 * DAY, "k", 0, "USD")
    late = ConversionEvent("late", "Purchase", CLICK_TIME + 7 * DAY + 1, "k", 0, "USD")
    early = ConversionEvent("early", "Purchase", CLICK_TIME - 1, "k", 0, "USD")
    assert attribute_conversions(clicks, [inside, late, early]) == {"ad-a": 1}


def test_ranking_unchanged():
    rows = {"ad-a": build_features(AdStats("ad-a", 10_000, 300, 30)),
            "ad-b": build_features(AdStats("ad-b", 10_000, 300, 3)),
            "ad-c": build_features(AdStats("ad-c", 10_000, 300, 30, quality=0.5))}
    candidates = [AdCandidate("ad-c", "c1", 1_000_000), AdCandidate("ad-b", "c1", 1_000_000),
                  AdCandidate("ad-a", "c2", 1_000_000)]
    assert [ad.ad_id for ad in rank_ads(candidates, rows)] == ["ad-a", "ad-c", "ad-b"]


def test_capi_batch_limits_unchanged():
    ingestor = ConversionIngestor(InMemoryEventStore())
    batch = [{"event_id": f"e{i}", "event_name": "Lead", "event_time": CLICK_TIME}
             for i in range(1001)]
    try:
        ingestor.ingest(batch)
    except InvalidEvent as exc:
        assert "1001" in str(exc), exc
    else:
        raise AssertionError("a batch of 1001 events must still be refused")
    ok = ingestor.ingest(batch[:1000])
    assert ok.accepted == 1000, ok
