"""Unit tests for the per-event-name attribution breakdown (ADS-2251)."""

from ad_ranking import Click, attribute_conversions, attribution_breakdown
from capi_pipeline import ConversionEvent

DAY = 24 * 3600
T0 = 1_770_000_000
CLICKS = [Click("k1", "ad-a", T0), Click("k2", "ad-b", T0)]


def _event(event_id, name, click_id, delay):
    return ConversionEvent(event_id, name, T0 + delay, click_id, 0, "USD")


CONVERSIONS = [
    _event("e1", "Purchase", "k1", 3600),
    _event("e2", "Lead", "k1", DAY),
    _event("e3", "Purchase", "k1", 2 * DAY),
    _event("e4", "Purchase", "k2", 8 * DAY),
    _event("e5", "Lead", "k2", -60),
    _event("e6", "Subscribe", None, 60),
]


def test_breakdown_counts_per_ad_and_event_name():
    assert attribution_breakdown(CLICKS, CONVERSIONS) == {
        ("ad-a", "Purchase"): 2,
        ("ad-a", "Lead"): 1,
    }


def test_breakdown_adds_up_to_the_attributed_total():
    totals = {}
    for (ad_id, _), count in attribution_breakdown(CLICKS, CONVERSIONS).items():
        totals[ad_id] = totals.get(ad_id, 0) + count
    assert totals == attribute_conversions(CLICKS, CONVERSIONS), totals
