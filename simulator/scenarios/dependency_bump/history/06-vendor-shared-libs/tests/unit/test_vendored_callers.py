"""Unit tests of the callers of the vendored libraries (<service>/_vendor, pinned in vendor.txt).

They pin what each caller computes, so a library bump that changes behaviour fails here.
"""

from api_gateway.quota import quota_window
from auth_service.sessions import session_expiry
from checkout_service.pricing import quote
from inventory_service.receiving import receive_manifest
from notification_service.digest import digest
from order_service.delivery import delivery_window
from order_service.lines import order_lines
from payment_service.payouts import payout_plan
from user_service.activity import activity_panel


def test_checkout_quote_totals_a_cart_and_plans_three_instalments():
    got = quote([{"sku": "mug", "unit_price": "12.5", "qty": 2}, {"sku": "tee", "unit_price": "19.99", "qty": 1}])
    assert got == {"total_minor": 4499, "receipt": "44.99 USD", "instalments": [1500, 1500, 1499]}, got


def test_payment_payout_plan_takes_the_fee_and_splits_the_rest():
    got = payout_plan("250.5", 290, 3)
    assert got == {"net_minor": 24324, "fee_text": "7.26 EUR", "transfers": [8108, 8108, 8108]}, got


def test_order_ships_next_day_after_the_cutoff():
    got = delivery_window("2026-03-02T16:20:00", "2026-03-02", 2)
    assert got == {"ships": "2026-03-03T15:00:00", "arrives": "2026-03-05T15:00:00", "missed_cutoff": True}, got


def test_user_activity_panel_counts_the_last_week():
    got = activity_panel("2025-11-30", ["2026-03-01T08:00:00", "2026-02-20T21:15:00"], "2026-03-04T12:00:00")
    assert got == {"member_days": 94, "last_seen": "2026-03-01T08:00:00", "recent_sign_ins": 1}, got


def test_auth_session_ends_when_a_password_policy_starts():
    got = session_expiry("2026-03-03T20:00:00", "2026-03-04")
    assert got == {"expires": "2026-03-04T00:00:00", "reason": "password_policy"}, got


def test_inventory_receives_supplier_skus_and_bundles():
    got = receive_manifest([("Blue Mug", "30"), ("mug+coaster_set", "2")])
    assert got == {"blue-mug": 30, "coaster-set": 2, "mug": 2}, got


def test_order_lines_expand_bundles_and_clean_skus():
    got = order_lines([{"sku": "MUG_XL", "qty": "24"}, {"sku": "mug+coaster", "qty": "1"}])
    assert got == [{"sku": "mug-xl", "qty": 24}, {"sku": "mug", "qty": 1}, {"sku": "coaster", "qty": 1}], got


def test_digest_keeps_unknown_fields_and_truncates_the_preview():
    got = digest("Ana", ["Blue mug", "Tea towel set with a very long product name"])
    assert got == {"subject": "Ana, your week: 2 orders", "preview": "Latest: Tea towel set with a very long\u2026"}, got
    assert digest("Bo", ["Poster"])["preview"] == "Latest: Poster {promo}"


def test_gateway_quota_window_is_the_utc_day():
    got = quota_window("2026-03-02T23:30:00-02:00")
    assert got == {"start": "2026-03-03T00:00:00Z", "end": "2026-03-04T00:00:00Z"}, got
