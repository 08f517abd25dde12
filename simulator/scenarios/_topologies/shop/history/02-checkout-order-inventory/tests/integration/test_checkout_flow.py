"""End to end, in one process: gateway -> checkout -> order -> inventory (+ notification).

Every service is the real app; only the stores are in-memory and the transport is in-process.
"""

from api_gateway import Gateway
from auth_service import AuthApp, InMemoryCredentials, InMemoryRevocations, tokens
from checkout_service import CheckoutApp
from inventory_service import InMemoryCollection, InventoryApp, StockStore
from notification_service import InMemoryOutbox, NotificationApp
from order_service import InMemoryOrderStore, OrderApp
from shop_common import InProcessTransport, Request

NOW = 1_700_000_000.0


def _stack():
    transport = InProcessTransport()
    stock = StockStore(InMemoryCollection([{"sku": "mug", "available": 2, "reserved": 0}]))
    outbox = InMemoryOutbox()
    transport.register("auth-service", AuthApp(InMemoryCredentials(iterations=1),
                                               InMemoryRevocations(), clock=lambda: NOW))
    transport.register("checkout-service", CheckoutApp(transport))
    transport.register("order-service", OrderApp(InMemoryOrderStore(), transport))
    transport.register("inventory-service", InventoryApp(stock))
    transport.register("notification-service", NotificationApp(outbox))
    return Gateway(transport), transport, stock, outbox


def _checkout(gateway, qty):
    headers = {"Authorization": "Bearer " + tokens.issue("u-1", NOW)}
    body = {"items": [{"sku": "mug", "qty": qty}], "email": "ana@example.com"}
    return gateway.handle(Request("POST", "/v1/checkout", body, headers))


def test_checkout_reserves_stock_and_confirms():
    gateway, transport, stock, outbox = _stack()
    answer = _checkout(gateway, 2)
    assert answer.status == 201, answer
    assert answer.body["status"] == "confirmed", answer.body
    assert stock.available("mug") == 0, "the checkout must have reserved the stock"
    assert len(outbox.messages) == 1, outbox.messages
    hops = [service for service, _, _ in transport.calls]
    assert hops == ["auth-service", "checkout-service", "order-service", "inventory-service",
                    "notification-service"], hops


def test_out_of_stock_reaches_the_client_as_409():
    gateway, _, stock, outbox = _stack()
    answer = _checkout(gateway, 3)
    assert answer.status == 409, answer
    assert stock.available("mug") == 2 and not outbox.messages


def test_inventory_outage_surfaces_as_502_at_the_edge():
    gateway, transport, _, _ = _stack()
    transport.unregister("inventory-service")
    answer = _checkout(gateway, 1)
    assert answer.status == 502, answer
