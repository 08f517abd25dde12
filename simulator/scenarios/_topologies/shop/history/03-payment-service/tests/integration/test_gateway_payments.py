"""Gateway -> payment-service, in one process: authenticated charges and outage mapping."""

from api_gateway import Gateway
from auth_service import AuthApp, InMemoryCredentials, InMemoryRevocations, tokens
from payment_service import InMemoryPaymentStore, PaymentApp, SandboxProvider
from shop_common import InProcessTransport, Request

NOW = 1_700_000_000.0
AUTH = {"Authorization": "Bearer " + tokens.issue("m-7", NOW)}
CHARGE = {"merchant_id": "m-7", "amount_cents": 990, "currency": "GBP", "source": "tok_visa"}


def _stack():
    transport = InProcessTransport()
    transport.register("auth-service", AuthApp(InMemoryCredentials(iterations=1),
                                               InMemoryRevocations(), clock=lambda: NOW))
    store = InMemoryPaymentStore()
    transport.register("payment-service", PaymentApp(store, SandboxProvider()))
    return Gateway(transport), transport, store


def test_charge_through_the_gateway():
    gateway, _, store = _stack()
    answer = gateway.handle(Request("POST", "/v1/payments/charge", CHARGE, AUTH))
    assert answer.status == 201, answer
    read = gateway.handle(Request("GET", f"/v1/payments/{answer.body['id']}", headers=AUTH))
    assert read.status == 200 and read.body["amount_cents"] == 990, read


def test_payments_need_a_token():
    gateway, _, store = _stack()
    answer = gateway.handle(Request("POST", "/v1/payments/charge", CHARGE))
    assert answer.status == 401 and not store.payments, answer


def test_payment_service_down_is_502_at_the_edge():
    gateway, transport, _ = _stack()
    transport.unregister("payment-service")
    answer = gateway.handle(Request("POST", "/v1/payments/charge", CHARGE, AUTH))
    assert answer.status == 502, answer
