"""Unit tests of order-service against stub inventory answers."""

from order_service import InMemoryOrderStore, OrderApp
from shop_common import InProcessTransport, Request, Response


class StubInventory:
    def __init__(self, status):
        self.status = status

    def handle(self, request):
        return Response(self.status, {"order_id": request.body["order_id"]})


def _create(inventory):
    transport = InProcessTransport({"inventory-service": inventory} if inventory else {})
    app = OrderApp(InMemoryOrderStore(), transport)
    answer = app.handle(Request("POST", "/v1/orders", {"user_id": "u-1",
                                                        "items": [{"sku": "mug", "qty": 1}]}))
    return app, answer


def test_confirmed_when_stock_reserved():
    app, answer = _create(StubInventory(201))
    assert answer.status == 201 and answer.body["status"] == "confirmed", answer
    read = app.handle(Request("GET", f"/v1/orders/{answer.body['order_id']}"))
    assert read.status == 200, read


def test_out_of_stock_is_409():
    _, answer = _create(StubInventory(409))
    assert answer.status == 409, answer


def test_inventory_down_is_503():
    _, answer = _create(None)
    assert answer.status == 503, answer


def test_empty_order_is_422():
    app = OrderApp(InMemoryOrderStore(), InProcessTransport())
    answer = app.handle(Request("POST", "/v1/orders", {"user_id": "u-1", "items": []}))
    assert answer.status == 422, answer
