"""Generalised second-price auction: what each ranked ad pays per conversion."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from ad_ranking.ranker import RankedAd

# No ad pays less than this per conversion, whatever the runner-up scored (micros).
RESERVE_PRICE_MICROS = 10_000


def clearing_prices(ranked: Sequence[RankedAd], bids: Mapping[str, int]) -> dict[str, int]:
    """Price per conversion of each ranked ad, in micros, by ad id.

    Each ad pays the smallest bid that would still have kept it above the ad ranked below it
    (its bid scaled by the runner-up's score over its own), never less than the reserve and
    never more than its own bid. The last ad has no runner-up and pays the reserve.
    """
    prices: dict[str, int] = {}
    for position, ad in enumerate(ranked):
        bid = bids[ad.ad_id]
        runner_up = ranked[position + 1].score if position + 1 < len(ranked) else 0.0
        if ad.score <= 0:
            prices[ad.ad_id] = min(bid, RESERVE_PRICE_MICROS)
            continue
        needed = math.ceil(bid * runner_up / ad.score)
        prices[ad.ad_id] = min(bid, max(needed, RESERVE_PRICE_MICROS))
    return prices
