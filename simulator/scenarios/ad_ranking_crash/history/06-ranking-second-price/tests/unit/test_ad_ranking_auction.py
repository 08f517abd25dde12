"""Unit tests for second-price clearing and the priced /v1/rank response (ADS-2207)."""

from ad_ranking import AdStats, InMemoryFeatureStore, RankedAd, handle_rank_request
from ad_ranking.auction import RESERVE_PRICE_MICROS, clearing_prices


def test_each_winner_pays_what_keeps_it_above_the_runner_up():
    ranked = [RankedAd("ad-a", "c-1", 60.0), RankedAd("ad-b", "c-1", 30.0),
              RankedAd("ad-c", "c-2", 0.0)]
    prices = clearing_prices(ranked, {"ad-a": 2_000_000, "ad-b": 1_000_000, "ad-c": 500_000})
    assert prices == {"ad-a": 1_000_000, "ad-b": RESERVE_PRICE_MICROS,
                      "ad-c": RESERVE_PRICE_MICROS}, prices


def test_a_price_never_exceeds_the_bid():
    ranked = [RankedAd("ad-a", "c-1", 10.0), RankedAd("ad-b", "c-1", 10.0)]
    prices = clearing_prices(ranked, {"ad-a": 5_000, "ad-b": 5_000})
    assert prices == {"ad-a": 5_000, "ad-b": 5_000}, prices


def test_the_rank_response_carries_prices():
    store = InMemoryFeatureStore([
        AdStats("ad-a", impressions=10_000, clicks=300, attributed_conversions=30),
        AdStats("ad-b", impressions=10_000, clicks=300, attributed_conversions=30),
    ])
    payload = {"candidates": [
        {"ad_id": "ad-a", "campaign_id": "c-1", "bid_micros": 2_000_000},
        {"ad_id": "ad-b", "campaign_id": "c-2", "bid_micros": 1_000_000},
    ]}
    response = handle_rank_request(payload, store)
    assert response["status"] == 200, response
    assert [(ad["ad_id"], ad["price_micros"]) for ad in response["ads"]] == [
        ("ad-a", 1_000_000), ("ad-b", RESERVE_PRICE_MICROS)], response


def test_new_and_unknown_ads():
    store = InMemoryFeatureStore([AdStats("ad-new", impressions=0, clicks=0,
                                          attributed_conversions=0)])
    assert set(store.features_for(["ad-new", "ad-gone"])) == {"ad-new"}
    payload = {"candidates": [{"ad_id": "ad-gone", "campaign_id": "c-1", "bid_micros": 10}]}
    assert handle_rank_request(payload, store)["status"] == 400
