"""checkout-service cart pricing: catalog prices are decimal strings, totals are minor units.

The quote is what the checkout page shows before the order is placed: the total, its display
text for the receipt line (amount then ISO code, as finance asked), and the pay-in-3 plan.
"""

from checkout_service._vendor import moneyfmt

INSTALMENTS = 3


def quote(lines, currency="USD"):
    """Price cart lines [{"sku", "unit_price", "qty"}]: total, receipt text, instalment plan."""
    total = 0
    for line in lines:
        total += moneyfmt.to_minor(line["unit_price"], currency) * int(line["qty"])
    return {
        "total_minor": total,
        "receipt": moneyfmt.format_money(total, currency, symbol=False),
        "instalments": moneyfmt.split_evenly(total, INSTALMENTS),
    }
