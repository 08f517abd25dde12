"""payment-service merchant payouts: gross settlement minus our fee, paid out in transfers.

Settlement files give amounts as decimal strings; the payout plan is in minor units so the
transfers add up to the net amount exactly.
"""

from payment_service._vendor import moneyfmt


def payout_plan(gross, fee_basis_points, transfers, currency="EUR"):
    """Net payout of a settlement: the fee (as text for the statement) and the transfers."""
    gross_minor = moneyfmt.to_minor(gross, currency)
    fee = gross_minor * fee_basis_points // 10_000
    net = gross_minor - fee
    return {
        "net_minor": net,
        "fee_text": moneyfmt.format_money(fee, currency, symbol=False),
        "transfers": moneyfmt.split_evenly(net, transfers),
    }
