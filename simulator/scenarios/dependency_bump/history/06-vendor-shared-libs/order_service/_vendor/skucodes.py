"""skucodes 0.9.3: canonical SKU codes, bundles and order-line quantities.

Vendored from the catalog repo (libs/skucodes); do not edit here, bump the pin in vendor.txt
and re-vendor.
"""

__version__ = "0.9.3"

_ALLOWED = set("abcdefghijklmnopqrstuvwxyz0123456789-")


def normalize(sku):
    """Canonical form of a SKU: trimmed, lower case, spaces and underscores as dashes."""
    code = sku.strip().lower().replace(" ", "-").replace("_", "-")
    if not code or not set(code) <= _ALLOWED:
        raise ValueError(f"not a SKU: {sku!r}")
    return code


def parse_qty(text, *, max_qty=99):
    """An order-line quantity from text: a whole number from 1 to max_qty."""
    qty = int(str(text).strip())
    if not 1 <= qty <= max_qty:
        raise ValueError(f"quantity {qty} outside 1..{max_qty}")
    return qty


def split_bundle(sku):
    """The SKUs a bundle code ("mug+coaster") stands for, each normalised."""
    return [normalize(part) for part in sku.split("+")]
