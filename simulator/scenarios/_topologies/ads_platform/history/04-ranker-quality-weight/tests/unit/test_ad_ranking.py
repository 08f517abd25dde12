"""Unit tests for ad_ranking: attribution, features, ranking and the /v1/rank handler."""

from ad_ranking import (
    AdCandidate,
    AdStats,
    Click,
    InMemoryFeatureStore,
    RankingError,
    attribute_conversions,
    build_features,
    handle_rank_request,
    rank_ads,
)
from capi_pipeline import ConversionEvent

DAY = 24 * 3600
T0 = 1_717_000_000


def _conversion(event_id, click_id, event_time):
    return ConversionEvent(event_id, "Purchase", event_time, click_id, 1_000_000, "USD")


def _store():
    return InMemoryFeatureStore(
        [
            AdStats("ad-a", impressions=10_000, clicks=300, attributed_conversions=30),
            AdStats("ad-b", impressions=10_000, clicks=150, attributed_conversions=12),
            AdStats("ad-c", impressions=10_000, clicks=300, attributed_conversions=30,
                    quality=0.5),
        ]
    )


CANDIDATES = [
    AdCandidate("ad-a", "camp-1", 2_000_000),
    AdCandidate("ad-b", "camp-1", 6_000_000),
    AdCandidate("ad-c", "camp-2", 2_000_000),
]


def test_attribution_counts_conversions_inside_the_window():
    clicks = [Click("clk-1", "ad-a", T0), Click("clk-2", "ad-b", T0)]
    conversions = [
        _conversion("e1", "clk-1", T0 + 3600),
        _conversion("e2", "clk-1", T0 + 7 * DAY),
        _conversion("e3", "clk-1", T0 + 7 * DAY + 1),
        _conversion("e4", "clk-2", T0 - 60),
        _conversion("e5", None, T0 + 60),
        _conversion("e6", "clk-unknown", T0 + 60),
    ]
    assert attribute_conversions(clicks, conversions) == {"ad-a": 2}, "window is [click, click+7d]"


def test_features_are_smoothed_rates():
    row = build_features(AdStats("ad-new", impressions=0, clicks=0, attributed_conversions=0))
    assert row["pctr"] == 0.01 and row["pcvr"] == 0.02, row
    assert {"pctr", "pcvr", "quality"} <= set(row), row


def test_rank_orders_by_expected_value():
    features = _store().features_for(["ad-a", "ad-b", "ad-c"])
    ranked = rank_ads(CANDIDATES, features)
    assert [ad.ad_id for ad in ranked] == ["ad-b", "ad-a", "ad-c"], ranked
    assert ranked[0].score > ranked[1].score > ranked[2].score, ranked


def test_rank_respects_limit():
    features = _store().features_for(["ad-a", "ad-b", "ad-c"])
    assert [ad.ad_id for ad in rank_ads(CANDIDATES, features, limit=1)] == ["ad-b"]


def test_rank_rejects_missing_feature_row():
    features = _store().features_for(["ad-a", "ad-b"])
    try:
        rank_ads(CANDIDATES, features)
    except RankingError as exc:
        assert "ad-c" in str(exc), exc
    else:
        raise AssertionError("an ad without a feature row must be rejected")


def test_rank_rejects_negative_bid():
    features = _store().features_for(["ad-a"])
    try:
        rank_ads([AdCandidate("ad-a", "camp-1", -1)], features)
    except RankingError:
        return
    raise AssertionError("a negative bid must be rejected")


def test_handler_ranks_a_valid_request():
    payload = {
        "candidates": [
            {"ad_id": c.ad_id, "campaign_id": c.campaign_id, "bid_micros": c.bid_micros}
            for c in CANDIDATES
        ],
        "limit": 2,
    }
    response = handle_rank_request(payload, _store())
    assert response["status"] == 200, response
    assert [ad["ad_id"] for ad in response["ads"]] == ["ad-b", "ad-a"], response


def test_handler_answers_400_to_a_malformed_request():
    for payload in ({}, {"candidates": []}, {"candidates": [{"ad_id": "ad-a"}]}):
        response = handle_rank_request(payload, _store())
        assert response["status"] == 400, (payload, response)
