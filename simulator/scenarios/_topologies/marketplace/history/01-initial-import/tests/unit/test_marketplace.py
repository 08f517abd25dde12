"""Unit tests of the marketplace services' pure logic (no database)."""

from catalog.browse import page_window, price_band
from notifier.consumer import emails_for
from orders.totals import split_by_seller
from payouts.statement import weekly_statement
from reviews.summary import rating_summary
from search_indexer.documents import document_for
from storefront.pages import listing_page


def test_page_window_is_limit_and_offset():
    assert page_window(3) == (24, 48), page_window(3)


def test_deep_pages_are_refused():
    try:
        page_window(201)
    except ValueError:
        return
    raise AssertionError("page 201 was accepted")


def test_price_band_keeps_the_band_cheapest_first():
    items = [{"id": 3, "price_cents": 900}, {"id": 1, "price_cents": 500}, {"id": 2, "price_cents": 5000}]
    assert [i["id"] for i in price_band(items, 400, 1000)] == [1, 3]


def test_rating_summary_counts_stars_and_averages():
    got = rating_summary([5, 4, 4, 1])
    assert got == {"stars": {"1": 1, "2": 0, "3": 0, "4": 2, "5": 1}, "average": 3.5, "count": 4}, got


def test_orders_split_per_seller_with_free_shipping_from_50():
    got = split_by_seller([
        {"seller_id": 7, "listing_id": 70, "price_cents": 3000, "qty": 2},
        {"seller_id": 9, "listing_id": 90, "price_cents": 1200, "qty": 1},
    ])
    assert got[7]["total_cents"] == 6000 and got[9]["total_cents"] == 1695, got


def test_weekly_statement_rolls_small_amounts_over():
    assert weekly_statement([900])["paid"] == 0
    got = weekly_statement([10_000, 2_500], carried_over_cents=400)
    assert got == {"gross": 12500, "commission": 1000, "fees": 60, "paid": 11840, "carried_over": 0}, got


def test_notifier_maps_events_to_emails():
    event = {"order_id": 5, "kind": "order.placed", "buyer_email": "b@x.test", "seller_email": "s@x.test"}
    assert [e["template"] for e in emails_for(event)] == ["order_confirmation", "new_order"]


def test_search_document_drops_stopwords_and_deletes_inactive():
    doc = document_for({"id": 1, "status": "active", "title": "The Oak Table with Chairs", "price_cents": 9000, "category_id": 4})
    assert doc["terms"] == ["chairs", "oak", "table"], doc
    assert document_for({"id": 2, "status": "sold", "title": "x", "price_cents": 1, "category_id": 1}) == {"delete": 2}


def test_listing_page_shows_price_and_rating():
    page = listing_page({"title": "Lamp", "price_cents": 1250}, {"count": 2, "average": 4.5}, ["a", "b"])
    assert page == {"title": "Lamp", "price": "\u20ac12.50", "rating": "4.5 stars from 2 reviews", "images": ["a", "b"]}, page


def test_consumers_book_apply_attach_and_moderate():
    from catalog.consumer import attach_image
    from orders.consumer import apply_payment_result, apply_shipment_update
    from payouts.consumer import book_delivery, book_refund
    from reviews.consumer import visible_after

    ledger = {}
    assert book_delivery({"seller_id": 4, "delivered_on": "2026-03-02", "iso_week": 10, "total_cents": 900}, ledger) == "4:2026-W10"
    assert book_refund({"seller_id": 4, "refunded_on": "2026-03-03", "iso_week": 10, "amount_cents": 300}, ledger) == "4:2026-W10"
    assert ledger["4:2026-W10"] == [900, -300], ledger
    assert apply_payment_result("pending", {"outcome": "captured"}) == "paid"
    assert apply_shipment_update("paid", {"scan": {"kind": "in_transit"}}) == "shipped"
    assert attach_image([{"position": 1, "url": "a"}], {"position": 0, "url": "b"})[0]["url"] == "b"
    assert visible_after({"labels": ["spam"]}) == {"visible": False, "reasons": ["spam"]}


def test_alert_seller_and_vote_handlers():
    from notifier.consumer import alert_email
    from reviews.consumer import apply_vote
    from search_indexer.documents import seller_document

    mail = alert_email({"buyer_email": "b@x.test", "query": "oak desk", "matches": [1, 2, 3, 4, 5, 6]})
    assert mail["subject"] == "6 new for 'oak desk'" and mail["listing_ids"] == [1, 2, 3, 4, 5], mail
    assert seller_document({"id": 7, "display_name": " Ana ", "country": "pt"}) == {"id": "seller-7", "name": "Ana", "country": "PT"}
    assert apply_vote({"helpful": 2}, {"direction": "up"}) == {"helpful": 3}
