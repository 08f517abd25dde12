"""catalog browse: page arithmetic and the price filter buyers can set."""

PAGE_SIZE = 24
MAX_PAGE = 200


def page_window(page, page_size=PAGE_SIZE):
    """LIMIT and OFFSET of a 1-based page; pages past MAX_PAGE are refused (deep paging is
    what search is for)."""
    if not 1 <= page <= MAX_PAGE:
        raise ValueError(f"page {page} outside 1..{MAX_PAGE}")
    return page_size, (page - 1) * page_size


def price_band(listings, low_cents=None, high_cents=None):
    """The listings whose price is within [low, high], cheapest first, ties by id."""
    kept = [
        item for item in listings
        if (low_cents is None or item["price_cents"] >= low_cents)
        and (high_cents is None or item["price_cents"] <= high_cents)
    ]
    return sorted(kept, key=lambda item: (item["price_cents"], item["id"]))
