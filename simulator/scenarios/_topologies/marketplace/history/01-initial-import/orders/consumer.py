"""orders consumer: payment-results in, the order's new status out."""

TRANSITIONS = {
    ("pending", "captured"): "paid",
    ("pending", "declined"): "payment_failed",
    ("paid", "refunded"): "refunded",
}


def apply_payment_result(order_status, result):
    """The order status after a payment result; an unexpected pair leaves it unchanged."""
    return TRANSITIONS.get((order_status, result["outcome"]), order_status)


SHIPMENT_STATUS = {"label_created": "paid", "in_transit": "shipped", "delivered": "delivered"}


def apply_shipment_update(order_status, update):
    """The order status after a carrier scan; scans of unknown kinds leave it unchanged."""
    return SHIPMENT_STATUS.get(update["scan"]["kind"], order_status)
