"""Grader checks for payment-bad-deploy: all PASS_TO_PASS.

The incident is fixed operationally (roll payment-service back to {{release.good}}), so the code
at HEAD must keep behaving: the gateway must still surface upstream failures as 502s, pods must
still refuse to start on a failed migration, and the retry dedupe of {{release.bad}} (a wanted
feature, merely shipped without its column) must still work in code.
"""

from contextlib import contextmanager

import payment_service.main as payment_main
import shop_common.server
from api_gateway import Gateway
from auth_service import AuthApp, InMemoryCredentials, InMemoryRevocations, tokens
from checkout_service import CheckoutApp
from inventory_service import InMemoryCollection, InventoryApp, StockStore
from notification_service import InMemoryOutbox, NotificationApp
from order_service import InMemoryOrderStore, OrderApp
from payment_service import InMemoryPaymentStore, PaymentApp, SandboxProvider
from shop_common import InProcessTransport, Request, Response

NOW = 1_700_000_000.0
CHARGE = {"merchant_id": "m-3", "amount_cents": 1299, "currency": "EUR", "source": "tok_visa"}


def _bearer(user):
    return {"Authorization": "Bearer " + tokens.issue(user, NOW)}


def _auth():
    return AuthApp(InMemoryCredentials(iterations=1), InMemoryRevocations(), clock=lambda: NOW)


class _CrashingApp:
    def handle(self, request):
        return Response(500, {"error": {"code": "internal", "message": "internal error"}})


def test_gateway_turns_payment_failures_into_502():
    transport = InProcessTransport({"auth-service": _auth()})
    gateway = Gateway(transport)
    request = Request("POST", "/v1/payments/charge", CHARGE, _bearer("m-3"))
    down = gateway.handle(request)
    assert down.status == 502, f"no ready payment-service pod must give 502, got {down}"
    assert down.body.get("error", {}).get("code") == "bad_gateway", down.body
    transport.register("payment-service", _CrashingApp())
    failing = gateway.handle(request)
    assert failing.status == 502, f"a payment-service 5xx must give 502, got {failing}"


def test_gateway_routes_charges_to_payment_service():
    transport = InProcessTransport({"auth-service": _auth()})
    store = InMemoryPaymentStore()
    transport.register("payment-service", PaymentApp(store, SandboxProvider()))
    answer = Gateway(transport).handle(Request("POST", "/v1/payments/charge", CHARGE,
                                               _bearer("m-3")))
    assert answer.status == 201, answer
    assert ("payment-service", "POST", "/v1/payments/charge") in transport.calls, transport.calls
    assert store.get(answer.body["id"]) is not None, "the charge must be recorded"
    anonymous = Gateway(transport).handle(Request("POST", "/v1/payments/charge", CHARGE))
    assert anonymous.status == 401, anonymous


class _SchemaRejectingDatabase:
    """Accepts the migration bookkeeping, rejects every migration's own SQL."""

    def __init__(self):
        self.recorded = []

    def execute(self, sql, params=()):
        if sql.startswith("CREATE TABLE IF NOT EXISTS schema_migrations"):
            return []
        if sql.startswith("SELECT id FROM schema_migrations"):
            return []
        if sql.startswith("INSERT INTO schema_migrations"):
            self.recorded.append(params[0])
            return []
        raise RuntimeError('column "x" does not exist')

    @contextmanager
    def transaction(self):
        yield self


class _FakeDatabaseClass:
    instance = None

    @classmethod
    def connect(cls, url):
        cls.instance = _SchemaRejectingDatabase()
        return cls.instance


def test_payment_service_refuses_to_start_when_a_migration_fails():
    served = []
    original_db, original_serve = payment_main.Database, shop_common.server.serve
    payment_main.Database = _FakeDatabaseClass
    shop_common.server.serve = lambda app, port=8080: served.append(app)
    try:
        code = payment_main.main()
    finally:
        payment_main.Database, shop_common.server.serve = original_db, original_serve
    assert code != 0, f"main() must exit non-zero when a migration fails, got {code!r}"
    assert not served, "a pod whose migration failed must not serve traffic"
    assert _FakeDatabaseClass.instance.recorded == [], "a failed migration must not be recorded"


def test_retried_charge_is_not_billed_twice():
    provider = SandboxProvider()
    app = PaymentApp(InMemoryPaymentStore(), provider)
    body = {**CHARGE, "{{missing_column}}": "order-5521-try"}
    first = app.handle(Request("POST", "/v1/payments/charge", body))
    retry = app.handle(Request("POST", "/v1/payments/charge", body))
    assert first.status == 201, first
    assert retry.status in (200, 201) and retry.body.get("id") == first.body["id"], retry
    assert len(provider.captures) == 1, f"the card was charged {len(provider.captures)} times"


def test_checkout_reserves_stock_end_to_end():
    transport = InProcessTransport()
    stock = StockStore(InMemoryCollection([{"sku": "lamp", "available": 1, "reserved": 0}]))
    outbox = InMemoryOutbox()
    transport.register("auth-service", _auth())
    transport.register("checkout-service", CheckoutApp(transport))
    transport.register("order-service", OrderApp(InMemoryOrderStore(), transport))
    transport.register("inventory-service", InventoryApp(stock))
    transport.register("notification-service", NotificationApp(outbox))
    gateway = Gateway(transport)
    body = {"items": [{"sku": "lamp", "qty": 1}], "email": "bo@example.com"}
    answer = gateway.handle(Request("POST", "/v1/checkout", body, _bearer("u-9")))
    assert answer.status == 201 and answer.body.get("status") == "confirmed", answer
    assert stock.available("lamp") == 0, "checkout must reserve the stock"
    again = gateway.handle(Request("POST", "/v1/checkout", body, _bearer("u-9")))
    assert again.status == 409, f"sold-out stock must give 409, got {again}"
