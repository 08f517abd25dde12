"""orders totals: what a buyer pays for a cart, per seller (one order per seller)."""

SHIPPING_CENTS = {"standard": 495, "express": 1295}
FREE_SHIPPING_FROM_CENTS = 5000


def split_by_seller(items, shipping="standard"):
    """One order per seller: items, subtotal, shipping (free from 50.00) and total, by seller."""
    orders = {}
    for item in items:
        order = orders.setdefault(item["seller_id"], {"items": [], "subtotal_cents": 0})
        order["items"].append(item["listing_id"])
        order["subtotal_cents"] += item["price_cents"] * item["qty"]
    for order in orders.values():
        free = order["subtotal_cents"] >= FREE_SHIPPING_FROM_CENTS
        order["shipping_cents"] = 0 if free else SHIPPING_CENTS[shipping]
        order["total_cents"] = order["subtotal_cents"] + order["shipping_cents"]
    return dict(sorted(orders.items()))
