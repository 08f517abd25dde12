"""Unit tests for the {{feature_key}} weight in ad_ranking's expected value (ADS-2207)."""

from ad_ranking import AdCandidate, AdStats, build_features, expected_value, rank_ads

CANDIDATE = AdCandidate("ad-a", "camp-1", 1_000_000)


def _row(ad_id="ad-a", **signals):
    return build_features(AdStats(ad_id, impressions=10_000, clicks=300,
                                  attributed_conversions=30, **signals))


def test_expected_value_scales_with_{{feature_key}}():
    full = expected_value(CANDIDATE, _row())
    half = expected_value(CANDIDATE, _row({{feature_key}}=0.5))
    assert half == full * 0.5, f"{{feature_key}}=0.5 should halve the score: {half} vs {full}"


def test_low_{{feature_key}}_ranks_below_an_equal_bid():
    rows = {"ad-a": _row("ad-a", {{feature_key}}=0.4), "ad-b": _row("ad-b")}
    candidates = [CANDIDATE, AdCandidate("ad-b", "camp-2", 1_000_000)]
    assert [ad.ad_id for ad in rank_ads(candidates, rows)] == ["ad-b", "ad-a"]
