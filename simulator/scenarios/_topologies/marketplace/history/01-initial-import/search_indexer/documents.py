"""search_indexer documents: a listing change in, the search document (or a delete) out."""

STOPWORDS = frozenset({"a", "an", "and", "for", "of", "the", "with"})


def document_for(change):
    """The search document of a listing change, or {"delete": id} when it left the catalog."""
    if change["status"] != "active":
        return {"delete": change["id"]}
    words = [w for w in change["title"].lower().split() if w not in STOPWORDS]
    return {"id": change["id"], "terms": sorted(set(words)), "price_cents": change["price_cents"],
            "category_id": change["category_id"]}


def seller_document(change):
    """The search document of a seller profile change (seller name search, country facet)."""
    return {"id": f"seller-{change['id']}", "name": change["display_name"].strip(),
            "country": change["country"].upper()}
