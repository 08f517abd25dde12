"""Grader probes for payment-bad-deploy (never shown to agents): all PASS_TO_PASS.

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

The incident is fixed operationally (roll {{fault.service}} back to {{fault.good}}), so the code
at HEAD must keep behaving: the gateway surfaces upstream failures as 502s and routes charges,
payment pods refuse to start on a failed migration, and checkout reserves stock end to end.
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


def gateway_turns_payment_failures_into_502():
    transport = InProcessTransport({"auth-service": _auth()})
    gateway = Gateway(transport)
    request = Request("POST", "/v1/payments/charge", CHARGE, _bearer("m-3"))
    down = gateway.handle(request)
    transport.register("payment-service", _CrashingApp())
    failing = gateway.handle(request)
    error = down.body.get("error")
    return {
        "no_pod": {"status": down.status,
                   "error_code": error.get("code") if isinstance(error, dict) else None},
        "pod_answers_500": failing.status,
    }


def gateway_routes_charges_to_payment_service():
    transport = InProcessTransport({"auth-service": _auth()})
    store = InMemoryPaymentStore()
    transport.register("payment-service", PaymentApp(store, SandboxProvider()))
    answer = Gateway(transport).handle(Request("POST", "/v1/payments/charge", CHARGE,
                                               _bearer("m-3")))
    anonymous = Gateway(transport).handle(Request("POST", "/v1/payments/charge", CHARGE))
    payment_id = answer.body.get("id")
    return {
        "status": answer.status,
        "routed_to_payment_service":
            ("payment-service", "POST", "/v1/payments/charge") in transport.calls,
        "charge_recorded": payment_id is not None and store.get(payment_id) is not None,
        "anonymous": anonymous.status,
    }


def payment_service_refuses_to_start_when_a_migration_fails():
    served = []
    _FakeDatabaseClass.instance = None
    original_db, original_serve = payment_main.Database, shop_common.server.serve
    payment_main.Database = _FakeDatabaseClass
    shop_common.server.serve = lambda app, port=8080: served.append(app)
    try:
        code = payment_main.main()
    finally:
        payment_main.Database, shop_common.server.serve = original_db, original_serve
    database = _FakeDatabaseClass.instance
    return {
        "exit_code": code,
        "served": len(served),
        "recorded": None if database is None else list(database.recorded),
    }


def checkout_reserves_stock_end_to_end():
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
    available = stock.available("lamp")
    again = gateway.handle(Request("POST", "/v1/checkout", body, _bearer("u-9")))
    return {
        "first": {"status": answer.status, "order_status": answer.body.get("status")},
        "available_after_first": available,
        "sold_out": again.status,
    }
