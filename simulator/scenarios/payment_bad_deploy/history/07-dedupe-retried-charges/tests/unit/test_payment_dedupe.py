"""PAY-1187: a retried charge with the same {{missing_column}} must not bill the card twice."""

from payment_service import InMemoryPaymentStore, PaymentApp, SandboxProvider
from shop_common import Request

CHARGE = {"merchant_id": "m-7", "amount_cents": 4200, "currency": "EUR", "source": "tok_visa",
          "{{missing_column}}": "cart-8812-attempt"}


def test_retry_returns_the_original_payment():
    provider = SandboxProvider()
    app = PaymentApp(InMemoryPaymentStore(), provider)
    first = app.handle(Request("POST", "/v1/payments/charge", CHARGE))
    retry = app.handle(Request("POST", "/v1/payments/charge", CHARGE))
    assert first.status == 201 and retry.status == 200, (first, retry)
    assert retry.body["id"] == first.body["id"], (first.body, retry.body)
    assert len(provider.captures) == 1, provider.captures


def test_other_merchant_same_value_is_a_new_charge():
    app = PaymentApp(InMemoryPaymentStore(), SandboxProvider())
    first = app.handle(Request("POST", "/v1/payments/charge", CHARGE))
    other = app.handle(Request("POST", "/v1/payments/charge", {**CHARGE, "merchant_id": "m-9"}))
    assert other.status == 201 and other.body["id"] != first.body["id"], other


def test_value_reused_for_a_different_amount_is_409():
    app = PaymentApp(InMemoryPaymentStore(), SandboxProvider())
    app.handle(Request("POST", "/v1/payments/charge", CHARGE))
    clash = app.handle(Request("POST", "/v1/payments/charge", {**CHARGE, "amount_cents": 1}))
    assert clash.status == 409, clash
