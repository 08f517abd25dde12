"""Grader probes for consumer-lag (never shown to agents): all PASS_TO_PASS.

The remedies are operations (skip a message, scale, roll back), not code changes, so every probe checks that the
services' code still computes what it did: browse paging, price bands, rating summaries, order
totals, payout statements, notification e-mails, search documents, listing pages. Each returns
what it observed; the grader compares it with the reference world's observation.
"""

from catalog.browse import page_window, price_band
from notifier.consumer import emails_for
from orders.totals import split_by_seller
from payouts.statement import weekly_statement
from reviews.summary import rating_summary
from search_indexer.documents import document_for
from storefront.pages import listing_page


def catalog_browse_unchanged():
    items = [{"id": i, "price_cents": (i * 733) % 5000 + 100} for i in range(1, 30)]
    return {
        "windows": [list(page_window(p)) for p in (1, 2, 7, 200)],
        "band": [i["id"] for i in price_band(items, 1000, 3000)],
    }


def reviews_summary_unchanged():
    return [rating_summary([5, 5, 4, 2, 1, 3]), rating_summary([])]


def orders_totals_unchanged():
    items = [
        {"seller_id": 3, "listing_id": 31, "price_cents": 2450, "qty": 2},
        {"seller_id": 5, "listing_id": 51, "price_cents": 999, "qty": 1},
        {"seller_id": 3, "listing_id": 32, "price_cents": 120, "qty": 3},
    ]
    return {str(k): v for k, v in split_by_seller(items, "express").items()}


def payouts_statement_unchanged():
    return [weekly_statement([12_000, 4_550, 780]), weekly_statement([600], carried_over_cents=300)]


def notifier_emails_unchanged():
    event = {"order_id": 77, "buyer_email": "b@shop.test", "seller_email": "s@shop.test"}
    return [emails_for({**event, "kind": k}) for k in ("order.placed", "order.delivered", "order.refunded")]


def search_documents_unchanged():
    changes = [
        {"id": 9, "status": "active", "title": "A Set of Six Oak Chairs", "price_cents": 24000, "category_id": 4},
        {"id": 10, "status": "reserved", "title": "Lamp", "price_cents": 900, "category_id": 2},
    ]
    return [document_for(c) for c in changes]


def storefront_listing_page_unchanged():
    return listing_page({"title": "Desk", "price_cents": 8905}, {"count": 0, "average": None},
                        ["i1", "i2", "i3", "i4", "i5"])
