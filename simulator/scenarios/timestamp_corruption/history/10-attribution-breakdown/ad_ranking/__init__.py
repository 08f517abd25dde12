"""Ad ranking: attributes conversions to clicks, builds features, ranks candidate ads."""

from ad_ranking.attribution import Click, attribute_conversions, attribution_breakdown
from ad_ranking.features import AdStats, InMemoryFeatureStore, build_features
from ad_ranking.ranker import AdCandidate, RankedAd, RankingError, expected_value, rank_ads
from ad_ranking.service import handle_rank_request

__all__ = [
    "AdCandidate",
    "AdStats",
    "Click",
    "InMemoryFeatureStore",
    "RankedAd",
    "RankingError",
    "attribute_conversions",
    "attribution_breakdown",
    "build_features",
    "expected_value",
    "handle_rank_request",
    "rank_ads",
]
