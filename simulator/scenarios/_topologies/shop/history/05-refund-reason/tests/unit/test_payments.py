"""Unit tests of payment-service handlers on the in-memory store and the sandbox provider."""

from payment_service import InMemoryPaymentStore, PaymentApp, SandboxProvider
from shop_common import Request

CHARGE = {"merchant_id": "m-7", "amount_cents": 2500, "currency": "eur", "source": "tok_visa"}


def _app():
    store, provider = InMemoryPaymentStore(), SandboxProvider()
    return PaymentApp(store, provider), store, provider


def _charge(app, **overrides):
    return app.handle(Request("POST", "/v1/payments/charge", {**CHARGE, **overrides}))


def test_charge_is_captured_and_recorded():
    app, store, provider = _app()
    answer = _charge(app)
    assert answer.status == 201, answer
    assert answer.body["status"] == "captured" and answer.body["currency"] == "EUR", answer.body
    assert store.get(answer.body["id"]) is not None
    assert provider.captures == [(2500, "EUR", "tok_visa")], provider.captures


def test_invalid_amounts_are_422():
    app, _, provider = _app()
    for amount in (0, -5, "12", 10_000_001, True):
        answer = _charge(app, amount_cents=amount)
        assert answer.status == 422, (amount, answer)
    assert provider.captures == [], "nothing may reach the provider"


def test_unsupported_currency_is_422():
    app, _, _ = _app()
    assert _charge(app, currency="XYZ").status == 422


def test_declined_card_is_402():
    app, store, _ = _app()
    answer = _charge(app, source="tok_declined")
    assert answer.status == 402 and not store.payments, answer


def test_partial_then_full_refund():
    app, _, _ = _app()
    payment_id = _charge(app).body["id"]
    first = app.handle(Request("POST", f"/v1/payments/{payment_id}/refund", {"amount_cents": 1000}))
    assert first.status == 201 and first.body["payment_status"] == "partially_refunded", first
    rest = app.handle(Request("POST", f"/v1/payments/{payment_id}/refund", {}))
    assert rest.status == 201 and rest.body["amount_cents"] == 1500, rest
    assert rest.body["payment_status"] == "refunded", rest


def test_cannot_refund_more_than_paid():
    app, _, _ = _app()
    payment_id = _charge(app).body["id"]
    answer = app.handle(Request("POST", f"/v1/payments/{payment_id}/refund", {"amount_cents": 2501}))
    assert answer.status == 409, answer


def test_unknown_payment_is_404():
    app, _, _ = _app()
    assert app.handle(Request("GET", "/v1/payments/pay_nope")).status == 404


def test_refund_reason_is_recorded():
    app, store, _ = _app()
    payment_id = _charge(app).body["id"]
    answer = app.handle(Request("POST", f"/v1/payments/{payment_id}/refund",
                                {"amount_cents": 500, "reason": "duplicate"}))
    assert answer.status == 201 and answer.body["reason"] == "duplicate", answer
    assert store.refunds[-1].reason == "duplicate", store.refunds


def test_unknown_refund_reason_is_422():
    app, _, _ = _app()
    payment_id = _charge(app).body["id"]
    answer = app.handle(Request("POST", f"/v1/payments/{payment_id}/refund", {"reason": "bored"}))
    assert answer.status == 422, answer
