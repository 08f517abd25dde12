"""Red team of issue 25: scripts that carry what a family's generator knows about its platform.

validate's scripts and learners know only what the training seeds show. An attacker who read
the generator knows more: the marketplace's hot queries and the indexes that serve them are the
same ten on every seed (`tools/families/axes/slow_query.py`, INDEXES), and a bad migration's
name is built from the index it breaks (`drop_unused_<index>`, `narrow_<index>`,
`reindex_<index>`, ...). On marketplace-slow-v3 only a bad migration named a hot index with a
verb other than a plain rebuild, and "roll back the one that does" scored 0.32. Since v4 every
batch carries harmless twins named as bad migrations are (`harmless_twin`), on the broken index
itself too: neither the names, nor which index the sick callers point at, nor the first or last
of those names tells the bad one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from metasre.agents.policies.shallow import Candidate, candidates, glance, operate, report
from metasre.conformance import EpisodeCaller
from tools.families.axes.slow_query import INDEXES, PLAN, bad_migration

from .shallow_play import SHALLOW_MAX, sweep

pytestmark = pytest.mark.xdist_group("redteam-shallow")

FAMILY = "meta-sre/marketplace-slow-v4"

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

BAD_NAMES = {bad_migration(index, mech)[0]: index for index, mechs in PLAN for mech in mechs}
"""Every name a bad migration can have, and the index it breaks."""


def _slug(c: Candidate) -> str:
    return str(c.location).partition(":")[2].split("_", 1)[1]


def _names_a_hot_index(caller: EpisodeCaller, observation: Mapping[str, Any]) -> None:
    opening = glance(caller, observation)
    rollbacks = [c for c in candidates(opening) if c.tool == "rollback_migration"]
    naming = [c for c in rollbacks if any(h in str(c.location) for h in HOT)]
    # A plain rebuild was the one harmless shape that named a hot index: try it last.
    naming.sort(key=lambda c: "reindex_" in str(c.location))
    if naming:
        _roll_back(caller, naming[0])


def _paged_index(pick: int) -> Callable[[EpisodeCaller, Mapping[str, Any]], None]:
    """Among migrations named as a bad one can be, those of the index whose callers (and the
    storefront above them) are sick and the fewest of whose are not; the `pick`-th listed."""

    def play(caller: EpisodeCaller, observation: Mapping[str, Any]) -> None:
        opening = glance(caller, observation)
        sick = {str(r["name"]) for r in opening.rows if r.get("health") != "healthy"}
        named = [
            c
            for c in candidates(opening)
            if c.tool == "rollback_migration" and _slug(c) in BAD_NAMES
        ]

        def fit(c: Candidate) -> int:
            spec = INDEXES[BAD_NAMES[_slug(c)]]
            callers = {s for s, _, _ in spec["callers"]} | (
                {"storefront"} if spec["front"] else set()
            )
            return len(callers & sick) - len(callers - sick)

        if named:
            best = max(map(fit, named))
            _roll_back(caller, [c for c in named if fit(c) == best][pick])

    return play


def _roll_back(caller: EpisodeCaller, pick: Candidate) -> None:
    operate(caller, pick)
    report(caller, pick.service, pick.location, "slow_query", pick.tool)


def test_scripts_that_know_the_hot_indexes_do_not_solve_marketplace_slow():
    """Measured 2026-12-08 over 50 test seeds: names-a-hot-index 0.14 (0.32 on v3), the first
    or the last migration named for the index the sick callers point at 0.14 and 0.12."""
    means = sweep(
        FAMILY,
        {
            "names-a-hot-index": _names_a_hot_index,
            "paged-index-first": _paged_index(0),
            "paged-index-last": _paged_index(-1),
        },
    )
    assert all(m <= SHALLOW_MAX for m in means.values()), means
