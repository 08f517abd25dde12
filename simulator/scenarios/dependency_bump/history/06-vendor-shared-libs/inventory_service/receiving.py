"""inventory-service goods receiving: supplier manifests into stock increments per SKU.

Supplier manifests write SKUs the way the supplier does ("Blue Mug", "MUG_XL") and ship
bundles ("mug+coaster") as one line; stock is counted per canonical SKU.
"""

from inventory_service._vendor import skucodes


def receive_manifest(rows):
    """Stock increments per canonical SKU from manifest rows (sku text, quantity text)."""
    counts = {}
    for sku, qty in rows:
        amount = skucodes.parse_qty(qty)
        for code in skucodes.split_bundle(sku):
            counts[code] = counts.get(code, 0) + amount
    return dict(sorted(counts.items()))
