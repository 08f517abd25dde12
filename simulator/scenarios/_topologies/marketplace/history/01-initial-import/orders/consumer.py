"""orders consumer: payment-results in, the order's new status out."""

TRANSITIONS = {
    ("pending", "captured"): "paid",
    ("pending", "declined"): "payment_failed",
    ("paid", "refunded"): "refunded",
}


def apply_payment_result(order_status, result):
    """The order status after a payment result; an unexpected pair leaves it unchanged."""
    return TRANSITIONS.get((order_status, result["outcome"]), order_status)
