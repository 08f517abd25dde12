"""Unit tests of checkout-service: retries toward order-service, best-effort e-mail."""

from checkout_service import CheckoutApp, config
from shop_common import InProcessTransport, Request, Response

ME = {"X-User-Id": "u-1"}
CART = {"items": [{"sku": "mug", "qty": 1}], "email": "ana@example.com"}


class FlakyOrders:
    """Fails `failures` times with a 503, then confirms."""

    def __init__(self, failures):
        self.failures = failures
        self.calls = 0

    def handle(self, request):
        self.calls += 1
        if self.calls <= self.failures:
            return Response(503, {"error": {"code": "unavailable", "message": "busy"}})
        return Response(201, {"order_id": "ord-000001", "status": "confirmed",
                              "items": request.body["items"]})


def test_retries_then_succeeds():
    orders = FlakyOrders(failures=config.ORDER_RETRIES)
    app = CheckoutApp(InProcessTransport({"order-service": orders}))
    answer = app.handle(Request("POST", "/v1/checkout", CART, ME))
    assert answer.status == 201, answer
    assert orders.calls == config.ORDER_RETRIES + 1, orders.calls


def test_gives_up_with_503():
    orders = FlakyOrders(failures=99)
    app = CheckoutApp(InProcessTransport({"order-service": orders}))
    answer = app.handle(Request("POST", "/v1/checkout", CART, ME))
    assert answer.status == 503, answer
    assert orders.calls == config.ORDER_RETRIES + 1, orders.calls


def test_notification_outage_does_not_fail_checkout():
    app = CheckoutApp(InProcessTransport({"order-service": FlakyOrders(0)}))
    answer = app.handle(Request("POST", "/v1/checkout", CART, ME))
    assert answer.status == 201, answer


def test_needs_signed_in_user():
    app = CheckoutApp(InProcessTransport({"order-service": FlakyOrders(0)}))
    assert app.handle(Request("POST", "/v1/checkout", CART)).status == 401
