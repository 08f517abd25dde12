"""payouts statement: commission, fixed fee and the amount a seller is paid for a week."""

COMMISSION_BP = 800        # 8 % of each order
FIXED_FEE_CENTS = 30       # per order
MIN_PAYOUT_CENTS = 1000    # smaller amounts roll over to next week


def weekly_statement(order_totals_cents, carried_over_cents=0):
    """Commission, fees and the payout for one seller's delivered orders of the week."""
    gross = sum(order_totals_cents)
    commission = sum(t * COMMISSION_BP // 10_000 for t in order_totals_cents)
    fees = FIXED_FEE_CENTS * len(order_totals_cents)
    net = gross - commission - fees + carried_over_cents
    paid = net if net >= MIN_PAYOUT_CENTS else 0
    return {"gross": gross, "commission": commission, "fees": fees, "paid": paid,
            "carried_over": net - paid}
