"""notifier consumer: an order event in, the e-mails it causes out."""

TEMPLATES = {
    "order.placed": [("buyer", "order_confirmation"), ("seller", "new_order")],
    "order.shipped": [("buyer", "shipped")],
    "order.delivered": [("buyer", "review_request"), ("seller", "delivered")],
    "order.expired": [("buyer", "order_expired")],
}


def emails_for(event):
    """The (recipient, template) e-mails one order event causes; unknown kinds cause none."""
    if "order_id" not in event or "kind" not in event:
        raise ValueError(f"malformed order event: missing {sorted({'order_id', 'kind'} - set(event))}")
    return [
        {"to": event[f"{who}_email"], "template": template, "order_id": event["order_id"]}
        for who, template in TEMPLATES.get(event["kind"], [])
    ]


def alert_email(event):
    """The e-mail for a saved-search alert: the buyer, the search, and up to five new matches."""
    matches = event["matches"]
    return {"to": event["buyer_email"], "template": "saved_search_alert",
            "subject": f"{len(matches)} new for '{event['query']}'", "listing_ids": matches[:5]}
