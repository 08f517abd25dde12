"""Handler of POST /v1/rank: parses the request, ranks the candidates, shapes the response."""

from __future__ import annotations

import logging
from typing import Any, Mapping, Protocol

from ad_ranking import config
from ad_ranking.auction import clearing_prices
from ad_ranking.ranker import AdCandidate, RankedAd, RankingError, rank_ads

logger = logging.getLogger(__name__)


class FeatureStore(Protocol):
    """Online feature store: one feature row per known ad."""

    def features_for(self, ad_ids: list[str]) -> dict[str, dict[str, float]]: ...


def _parse_candidates(payload: Mapping[str, Any]) -> list[AdCandidate]:
    raw = payload["candidates"]
    if not isinstance(raw, list) or not raw:
        raise ValueError("candidates must be a non-empty list")
    if len(raw) > config.MAX_CANDIDATES:
        raise ValueError(f"{len(raw)} candidates exceeds the limit of {config.MAX_CANDIDATES}")
    return [
        AdCandidate(str(c["ad_id"]), str(c["campaign_id"]), int(c["bid_micros"])) for c in raw
    ]


def _ad_payload(ad: RankedAd, price_micros: int) -> dict[str, Any]:
    """One ranked ad as the frontend reads it."""
    return {
        "ad_id": ad.ad_id,
        "campaign_id": ad.campaign_id,
        "score": ad.score,
        "price_micros": price_micros,
    }


def handle_rank_request(payload: Mapping[str, Any], store: FeatureStore) -> dict[str, Any]:
    """Rank the request's candidates and price the winners.

    Returns {"status": 200, "ads": [...]} or {"status": 400, "error": ...} for a request we
    cannot rank. Anything else propagates: the server answers 500 and logs the traceback.
    """
    try:
        candidates = _parse_candidates(payload)
        limit = int(payload.get("limit", config.MAX_ADS_PER_RESPONSE))
    except (KeyError, TypeError, ValueError) as exc:
        return {"status": 400, "error": f"malformed rank request: {exc}"}
    features_by_ad = store.features_for([c.ad_id for c in candidates])
    try:
        ranked = rank_ads(candidates, features_by_ad, limit=limit)
    except RankingError as exc:
        logger.warning("rank request rejected", extra={"reason": str(exc)})
        return {"status": 400, "error": str(exc)}
    bids = {c.ad_id: c.bid_micros for c in candidates}
    prices = clearing_prices(ranked, bids)
    return {"status": 200, "ads": [_ad_payload(ad, prices[ad.ad_id]) for ad in ranked]}
