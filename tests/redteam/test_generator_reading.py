"""Red team of issue 25: scripts that carry what a family's generator knows about its platform.

validate's scripts and learners know only what the training seeds show. An attacker who read
the generator knows more: the marketplace's hot queries and the indexes that serve them are the
same ten on every seed (`tools/families/axes/slow_query.py`, INDEXES). A bad migration's name
is built from the index it breaks (`drop_unused_<index>`, `narrow_<index>`, `reindex_<index>`,
...), and harmless batch-mates name one of those indexes only as plain rebuilds. So "roll back
the migration of the batch that names a hot index, a rebuild last" needs no investigation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from metasre.agents.policies.shallow import candidates, glance, operate, report
from metasre.conformance import EpisodeCaller

from .shallow_play import SHALLOW_MAX, sweep

pytestmark = pytest.mark.xdist_group("redteam-shallow")

HOT = (
    "listings_category_price",
    "listings_seller_updated",
    "listings_lower_title",
    "reviews_listing_created",
    "sellers_lower_email",
    "orders_buyer_created",
    "order_items_order_id",
    "shipments_tracking_no",
    "orders_seller_status_created",
    "orders_pending_created",
)
"""The indexes the marketplace's hot queries read, as its generator names them."""


def _names_a_hot_index(caller: EpisodeCaller, observation: Mapping[str, Any]) -> None:
    opening = glance(caller, observation)
    rollbacks = [c for c in candidates(opening) if c.tool == "rollback_migration"]
    naming = [c for c in rollbacks if any(h in str(c.location) for h in HOT)]
    # A plain rebuild is the one harmless shape that names a hot index: try it last.
    naming.sort(key=lambda c: "reindex_" in str(c.location))
    if naming:
        pick = naming[0]
        operate(caller, pick)
        report(caller, pick.service, pick.location, "slow_query", pick.tool)


@pytest.mark.xfail(
    strict=True,
    reason="0.32 on marketplace-slow-v4 (2026-12-07): the hot indexes are the same on every"
    " seed, and only a bad migration names one with a verb other than a rebuild; open work of"
    " issue 25 (the platform's hot indexes would have to vary by seed)",
)
def test_a_script_that_knows_the_hot_indexes_does_not_solve_marketplace_slow():
    means = sweep("meta-sre/marketplace-slow-v4", {"names-a-hot-index": _names_a_hot_index})
    assert means["names-a-hot-index"] <= SHALLOW_MAX, means
