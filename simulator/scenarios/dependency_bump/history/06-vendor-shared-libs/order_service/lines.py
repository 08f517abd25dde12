"""order-service order lines: the cart's items as canonical SKUs and quantities.

Carts come from the storefront and the B2B importer, which write SKUs as merchants type them;
a bundle ("mug+coaster") becomes one order line per SKU.
"""

from order_service._vendor import skucodes


def order_lines(items):
    """Canonical order lines [{"sku", "qty"}] of cart items, bundles expanded, in cart order."""
    lines = []
    for item in items:
        qty = skucodes.parse_qty(item["qty"])
        for code in skucodes.split_bundle(item["sku"]):
            lines.append({"sku": code, "qty": qty})
    return lines
