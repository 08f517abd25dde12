"""Grader probes for dependency-bump (never shown to agents).

One probe per caller of a vendored library: it calls the caller on fixed inputs that use every
part of the library the caller relies on, and returns what it computed. It decides nothing: the
grader compares the observation with the reference world's. The seed's bumped library breaks
its callers' probes (FAIL_TO_PASS); every other caller's probe is PASS_TO_PASS. A caller whose
library validates its input is also called with input the library must refuse, so a "fix"
that drops the validation instead of adapting the caller is no fix.
"""


def _outcome(call):
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - what escaped the caller is the observation
        return {"raised": type(exc).__name__}


def checkout_quote_prices_carts():
    from checkout_service.pricing import quote

    carts = [
        [{"sku": "mug", "unit_price": "12.5", "qty": 2}, {"sku": "tee", "unit_price": "19.99", "qty": 1}],
        [{"sku": "poster", "unit_price": "7", "qty": 3}],
    ]
    refused = [[{"sku": "mug", "unit_price": "12.505", "qty": 1}],
               [{"sku": "tee", "unit_price": "3.14159", "qty": 2}]]
    return {"carts": [quote(cart) for cart in carts],
            "refused": [_outcome(lambda c=cart: quote(c)) for cart in refused]}


def payment_payout_plans():
    from payment_service.payouts import payout_plan

    return {"plans": [payout_plan("250.5", 290, 3), payout_plan("1204.75", 150, 4)],
            "refused": [_outcome(lambda: payout_plan("99.999", 290, 3)),
                        _outcome(lambda: payout_plan("0.0001", 150, 2))]}


def order_delivery_windows():
    from order_service.delivery import delivery_window

    return [
        delivery_window("2026-03-02T16:20:00", "2026-03-02", 2),
        delivery_window("2026-03-02T09:05:30", "2026-03-02", 3),
    ]


def user_activity_panels():
    from user_service.activity import activity_panel

    seen = ["2026-03-01T08:00:00", "2026-02-20T21:15:00", "2026-03-03T19:45:10"]
    return [
        activity_panel("2025-11-30", seen, "2026-03-04T12:00:00"),
        activity_panel("2026-02-28", [], "2026-03-04T12:00:00"),
    ]


def auth_session_expiries():
    from auth_service.sessions import session_expiry

    return [
        session_expiry("2026-03-03T20:00:00", "2026-03-04"),
        session_expiry("2026-03-03T06:30:00", "2026-03-10"),
        session_expiry("2026-03-05T23:59:00"),
    ]


def inventory_manifest_receipts():
    from inventory_service.receiving import receive_manifest

    return {"received": receive_manifest([("Blue Mug", "30"), ("mug+coaster_set", "2"),
                                          ("tea-towel", "5")]),
            "refused": [_outcome(lambda: receive_manifest([("mug", "0")])),
                        _outcome(lambda: receive_manifest([("mug", "250")])),
                        _outcome(lambda: receive_manifest([("mug/../etc", "1")])),
                        _outcome(lambda: receive_manifest([("", "1")]))]}


def order_lines_from_carts():
    from order_service.lines import order_lines

    return {"lines": order_lines(
        [{"sku": "MUG_XL", "qty": "24"}, {"sku": "mug+coaster", "qty": "1"}, {"sku": "Tea Towel", "qty": 2}]
    ), "refused": [_outcome(lambda: order_lines([{"sku": "mug", "qty": "0"}])),
                   _outcome(lambda: order_lines([{"sku": "mug", "qty": "120"}])),
                   _outcome(lambda: order_lines([{"sku": "mug;drop", "qty": "1"}])),
                   _outcome(lambda: order_lines([{"sku": "", "qty": "1"}]))]}


def notification_digests():
    from notification_service.digest import digest

    return [
        digest("Ana", ["Blue mug", "Tea towel set with a very long product name"]),
        digest("Bo", ["Poster"]),
    ]


def gateway_quota_windows():
    from api_gateway.quota import quota_window

    return [quota_window("2026-03-02T23:30:00-02:00"), quota_window("2026-03-03T00:00:00Z")]
