"""Unit tests of inventory-service: stock store and all-or-nothing reservations."""

from inventory_service import InMemoryCollection, InventoryApp, StockStore
from shop_common import Request


def _store():
    return StockStore(InMemoryCollection([
        {"sku": "mug", "available": 3, "reserved": 0},
        {"sku": "tee", "available": 1, "reserved": 0},
    ]))


def test_reserve_takes_stock():
    store = _store()
    assert store.reserve("mug", 2) is True
    assert store.available("mug") == 1


def test_cannot_reserve_more_than_available():
    store = _store()
    assert store.reserve("tee", 2) is False
    assert store.available("tee") == 1


def test_restock_creates_unknown_sku():
    store = _store()
    store.restock("cap", 5)
    assert store.available("cap") == 5


def test_reservation_is_all_or_nothing():
    store = _store()
    app = InventoryApp(store)
    answer = app.handle(Request("POST", "/v1/inventory/reservations", {
        "order_id": "ord-1", "items": [{"sku": "mug", "qty": 2}, {"sku": "tee", "qty": 5}]}))
    assert answer.status == 409, answer
    assert store.available("mug") == 3, "the mug units taken before the refusal must be released"


def test_get_stock_and_unknown_sku():
    app = InventoryApp(_store())
    assert app.handle(Request("GET", "/v1/inventory/mug")).body["available"] == 3
    assert app.handle(Request("GET", "/v1/inventory/nope")).status == 404
