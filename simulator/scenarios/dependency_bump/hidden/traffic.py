"""Production traffic of the shop: the requests its services serve every minute.

Not a hidden check: the world replays these on the current code after each change, logs each
request with its outcome in its service's log, and a service recovers when its requests are
answered as the fixed code answers them (see metasre.simulator.traffic). The hidden checks
use other calls on other inputs.
"""

REQUESTS = {
    "checkout": ["checkout-service", "POST /v1/checkout cart=[lamp 24.9 x1, cup 3.5 x4]"],
    "payout_plan": ["payment-service", "POST /v1/payouts/plan amount=980.5 fee_bps=210 parts=3"],
    "order_delivery": ["order-service", "POST /v1/orders placed=2026-04-06T15:40:00 days=2"],
    "order_lines": ["order-service", "POST /v1/orders lines=[LAMP_XL x21, lamp+shade x1]"],
    "activity": ["user-service", "GET /v1/users/me/activity since=2025-12-15"],
    "login": ["auth-service", "POST /v1/login at=2026-04-05T21:10:00 until=2026-04-06"],
    "stock_receipt": ["inventory-service", "POST /v1/stock/receipts [Desk Lamp 24, lamp+shade_kit 3]"],
    "weekly_digest": ["notification-service", "POST /v1/digests/weekly to=Rui items=2"],
    "quota": ["api-gateway", "GET /v1/quota at=2026-04-06T23:45:00-03:00"],
}


def _served(call):
    try:
        return {"status": 200, "body": call()}
    except Exception as exc:  # noqa: BLE001 - a 500 is what the caller sees
        return {"raised": type(exc).__name__}


def checkout():
    from checkout_service.pricing import quote

    return _served(lambda: quote([{"sku": "lamp", "unit_price": "24.9", "qty": 1},
                                  {"sku": "cup", "unit_price": "3.5", "qty": 4}]))


def payout_plan():
    from payment_service.payouts import payout_plan

    return _served(lambda: payout_plan("980.5", 210, 3))


def order_delivery():
    from order_service.delivery import delivery_window

    return _served(lambda: delivery_window("2026-04-06T15:40:00", "2026-04-06", 2))


def order_lines():
    from order_service.lines import order_lines

    return _served(lambda: order_lines([{"sku": "LAMP_XL", "qty": "21"},
                                        {"sku": "lamp+shade", "qty": "1"}]))


def activity():
    from user_service.activity import activity_panel

    seen = ["2026-04-01T10:30:00", "2026-03-28T22:05:00"]
    return _served(lambda: activity_panel("2025-12-15", seen, "2026-04-06T09:00:00"))


def login():
    from auth_service.sessions import session_expiry

    return _served(lambda: [session_expiry("2026-04-05T21:10:00", "2026-04-06"),
                            session_expiry("2026-04-07T22:30:00")])


def stock_receipt():
    from inventory_service.receiving import receive_manifest

    return _served(lambda: receive_manifest([("Desk Lamp", "24"), ("lamp+shade_kit", "3")]))


def weekly_digest():
    from notification_service.digest import digest

    return _served(lambda: digest("Rui", ["Desk lamp", "Lampshade in linen, natural colour, large"]))


def quota():
    from api_gateway.quota import quota_window

    return _served(lambda: quota_window("2026-04-06T23:45:00-03:00"))
