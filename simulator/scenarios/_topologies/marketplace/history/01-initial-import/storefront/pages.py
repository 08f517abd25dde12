"""storefront pages: what a listing page shows, from the answers of catalog and reviews."""


def listing_page(listing, summary, images):
    """The listing page model: title, price text, rating line and the first four images."""
    euros, cents = divmod(listing["price_cents"], 100)
    rating = "no reviews yet" if not summary["count"] else (
        f"{summary['average']} stars from {summary['count']} reviews")
    return {"title": listing["title"], "price": f"\u20ac{euros}.{cents:02d}", "rating": rating,
            "images": images[:4]}
