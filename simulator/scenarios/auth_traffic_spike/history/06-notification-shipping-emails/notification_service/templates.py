"""E-mail templates: subject and body, with ``str.format`` placeholders."""

TEMPLATES: dict[str, tuple[str, str]] = {
    "order_confirmation": (
        "Your order {order_id} is confirmed",
        "Thanks for shopping with us! Order {order_id} ({item_count} items) is being prepared.",
    ),
    "email_changed": (
        "Your e-mail address was changed",
        "The e-mail address of your account is now {email}. If this was not you, contact us.",
    ),
    "refund_issued": (
        "Your refund is on its way",
        "We refunded {amount} {currency} for payment {payment_id}.",
    ),
    "order_shipped": (
        "Your order {order_id} is on its way",
        "Order {order_id} left our warehouse with {carrier}. Track it: {tracking_url}",
    ),
}
