"""Per-ad feature rows: smoothed rates from the last 7 days plus feature-store signals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ad_ranking import config


@dataclass(frozen=True, slots=True)
class AdStats:
    """Counters for one ad over the last 7 days, and its static feature-store signals."""

    ad_id: str
    impressions: int
    clicks: int
    attributed_conversions: int
    """Conversions credited by attribute_conversions()."""
    quality: float = 1.0
    """Landing-page and creative quality, 0..1."""
    relevance: float = 1.0
    """Query/ad relevance; boosted verticals may exceed 1."""
    freshness: float = 1.0
    """Decays from 1 as the creative ages."""
    brand_safety: float = 1.0
    """1 for safe placements, lower for borderline ones."""


def build_features(stats: AdStats) -> dict[str, float]:
    """Return the feature row of one ad, keyed by feature name.

    The row is a plain dict because it is shared, as JSON, with the offline training jobs.
    """
    pctr = (stats.clicks + config.PRIOR_CLICKS) / (stats.impressions + config.PRIOR_IMPRESSIONS)
    pcvr = (stats.attributed_conversions + config.PRIOR_CONVERSIONS) / (
        stats.clicks + config.PRIOR_CONVERSION_CLICKS
    )
    return {
        "pctr": round(pctr, 6),
        "pcvr": round(pcvr, 6),
        "quality": stats.quality,
        "relevance": stats.relevance,
        "freshness": stats.freshness,
        "brand_safety": stats.brand_safety,
    }


class InMemoryFeatureStore:
    """Feature rows computed from AdStats, keyed by ad id (the online store's interface).

    A row is built the first time it is read and kept: the store holds every ad, a request
    reads a few hundred.
    """

    def __init__(self, stats: Iterable[AdStats]) -> None:
        self._stats = {s.ad_id: s for s in stats}
        self._rows: dict[str, dict[str, float]] = {}

    def features_for(self, ad_ids: Iterable[str]) -> dict[str, dict[str, float]]:
        """Rows for the ads that have stats; unknown ads are left out."""
        rows: dict[str, dict[str, float]] = {}
        for ad_id in ad_ids:
            if ad_id not in self._stats:
                continue
            if ad_id not in self._rows:
                self._rows[ad_id] = build_features(self._stats[ad_id])
            rows[ad_id] = self._rows[ad_id]
        return rows
