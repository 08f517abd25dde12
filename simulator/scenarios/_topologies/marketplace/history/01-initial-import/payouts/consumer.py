"""payouts consumer: delivery-events in, the order's amount booked to the seller's week."""


def book_delivery(event, ledger):
    """Add a delivered order's total to its seller's week in `ledger`; returns the week key."""
    week = f"{event['seller_id']}:{event['delivered_on'][:4]}-W{event['iso_week']:02d}"
    ledger.setdefault(week, []).append(event["total_cents"])
    return week


def book_refund(event, ledger):
    """Take a refunded order's amount off its seller's week in `ledger`; returns the week key."""
    week = f"{event['seller_id']}:{event['refunded_on'][:4]}-W{event['iso_week']:02d}"
    ledger.setdefault(week, []).append(-abs(int(event["amount_cents"])))
    return week
