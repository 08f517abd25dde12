"""Ranks the candidate ads of one request by expected value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ad_ranking import config


class RankingError(ValueError):
    """Raised when a ranking request cannot be scored: a bad candidate or a missing feature."""


@dataclass(frozen=True, slots=True)
class AdCandidate:
    """An ad eligible for the request, with the advertiser's bid."""

    ad_id: str
    campaign_id: str
    bid_micros: int
    """Bid per conversion, in micro-units of the account currency."""


@dataclass(frozen=True, slots=True)
class RankedAd:
    """One ranked ad, as returned to the ads frontend."""

    ad_id: str
    campaign_id: str
    score: float


def expected_value(candidate: AdCandidate, features: Mapping[str, float]) -> float:
    """Expected revenue of one impression: bid x pCTR x pCVR."""
    pctr = features["pctr"]
    pcvr = features["pcvr"]
    return candidate.bid_micros * pctr * pcvr


def rank_ads(
    candidates: Sequence[AdCandidate],
    features_by_ad: Mapping[str, Mapping[str, float]],
    limit: int = config.MAX_ADS_PER_RESPONSE,
) -> list[RankedAd]:
    """Score the candidates and return the best `limit`, highest expected value first.

    Ties are broken by ad id so every replica returns the same order.

    Raises:
        RankingError: a candidate has a negative bid, no feature row, or a row missing a
            feature the score needs.
    """
    ranked: list[RankedAd] = []
    for candidate in candidates:
        if candidate.bid_micros < 0:
            raise RankingError(f"ad {candidate.ad_id}: bid_micros must be >= 0")
        features = features_by_ad.get(candidate.ad_id)
        if features is None:
            raise RankingError(f"ad {candidate.ad_id}: no feature row in the feature store")
        try:
            score = expected_value(candidate, features)
        except KeyError as exc:
            raise RankingError(f"ad {candidate.ad_id}: feature {exc.args[0]!r} missing") from None
        ranked.append(RankedAd(candidate.ad_id, candidate.campaign_id, round(score, 6)))
    ranked.sort(key=lambda ad: (-ad.score, ad.ad_id))
    return ranked[:limit]
