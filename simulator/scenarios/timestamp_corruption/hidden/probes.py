"""Grader probes for meta-sre/timestamp-corruption-v1 (never shown to agents).

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

FAIL_TO_PASS: what event times sent in epoch seconds (server-side integrations) become, and how
their conversions are attributed end to end. The inputs sit well clear of any cut-off strictly
between the largest plausible epoch second and the smallest plausible epoch millisecond, so
every such cut-off is observed alike; the probes do not pin one value. PASS_TO_PASS:
milliseconds conversion, rejection of bad times, ad_ranking's attribution window and ranking
(widening the window downstream is not a fix), and the CAPI batch limit.
"""

from ad_ranking import AdCandidate, AdStats, Click, attribute_conversions, build_features, rank_ads
from capi_pipeline import ConversionEvent, ConversionIngestor, InMemoryEventStore, InvalidEvent
from capi_pipeline import normalize_event, normalize_timestamp

HOUR = 3600
DAY = 24 * HOUR
CLICK_TIME = {{sample.click}}


def _normalized(raw):
    """normalize_timestamp(raw), or what it raised."""
    try:
        return normalize_timestamp(raw)
    except Exception as exc:  # noqa: BLE001 - the exception type is what was observed
        return {"raised": type(exc).__name__}


# --- FAIL_TO_PASS -------------------------------------------------------------------------


def epoch_seconds_stay_seconds():
    # 2001-09-09, 2020-09-13, the incident's week, 2033-05-18 and 2096-10-02: all real seconds.
    observed = []
    for seconds in (1_000_000_000, 1_600_000_000, CLICK_TIME, 2_000_000_000, 4_000_000_000):
        observed.append({
            "int": _normalized(seconds),
            "str": _normalized(str(seconds)),
            "fraction": _normalized(seconds + 0.75),
        })
    event = normalize_event({"event_id": "srv-1", "event_name": "Purchase",
                             "event_time": CLICK_TIME + HOUR, "click_id": "clk-1"})
    return {"normalized": observed, "event_time": event.event_time}


def server_side_and_pixel_conversions_are_attributed():
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
    events = store.all_events()
    counts = dict(attribute_conversions(clicks, events))
    features = {ad: build_features(AdStats(ad, 1_000, 40, counts.get(ad, 0)))
                for ad in ("ad-x", "ad-y", "ad-q")}
    return {
        "accepted": result.accepted,
        "rejected": len(result.rejected),
        "stored_times": {event.event_id: event.event_time for event in events},
        "attributed": counts,
        "pcvr": {ad: round(row["pcvr"], 6) for ad, row in features.items()},
    }


# --- PASS_TO_PASS -------------------------------------------------------------------------


def epoch_milliseconds_still_become_seconds():
    millis = [_normalized(value)
              for value in (1_000_000_000_000, CLICK_TIME * 1000 + 999, 4_000_000_000_000)]
    return {"millis": millis, "str": _normalized(str(CLICK_TIME * 1000 + 250))}


def bad_event_times_still_rejected():
    observed = []
    for bad in (None, "", "yesterday", 0, -1, -CLICK_TIME):
        try:
            value = normalize_timestamp(bad)
        except InvalidEvent as exc:
            observed.append({"raised": type(exc).__name__})
        else:
            observed.append({"returned": value})
    return observed


def attribution_window_is_still_seven_days():
    clicks = [Click("k", "ad-a", CLICK_TIME)]
    inside = ConversionEvent("in", "Purchase", CLICK_TIME + 7 * DAY, "k", 0, "USD")
    late = ConversionEvent("late", "Purchase", CLICK_TIME + 7 * DAY + 1, "k", 0, "USD")
    early = ConversionEvent("early", "Purchase", CLICK_TIME - 1, "k", 0, "USD")
    return dict(attribute_conversions(clicks, [inside, late, early]))


def ranking_unchanged():
    rows = {"ad-a": build_features(AdStats("ad-a", 10_000, 300, 30)),
            "ad-b": build_features(AdStats("ad-b", 10_000, 300, 3)),
            "ad-c": build_features(AdStats("ad-c", 10_000, 300, 30, quality=0.5))}
    candidates = [AdCandidate("ad-c", "c1", 1_000_000), AdCandidate("ad-b", "c1", 1_000_000),
                  AdCandidate("ad-a", "c2", 1_000_000)]
    return [ad.ad_id for ad in rank_ads(candidates, rows)]


def capi_batch_limits_unchanged():
    ingestor = ConversionIngestor(InMemoryEventStore())
    batch = [{"event_id": f"e{i}", "event_name": "Lead", "event_time": CLICK_TIME}
             for i in range(1001)]
    try:
        ingestor.ingest(batch)
    except InvalidEvent as exc:
        oversize = {"raised": type(exc).__name__, "names_the_size": "1001" in str(exc)}
    else:
        oversize = {"raised": None}
    ok = ingestor.ingest(batch[:1000])
    return {"oversize": oversize, "accepted_of_1000": ok.accepted}
