"""payment-service HTTP handlers: charge a card, read a payment, refund it."""

from __future__ import annotations

import logging

from payment_service import config
from payment_service.models import Payment, Refund
from payment_service.provider import CardProvider
from payment_service.store import PaymentStore
from shop_common import Request, Response, ServiceApp, error_response, json_response

log = logging.getLogger("payment-service")


def validate_charge(body: dict) -> str | None:
    """What is wrong with a charge request, or None."""
    if not body.get("merchant_id"):
        return "merchant_id is required"
    amount = body.get("amount_cents")
    if not isinstance(amount, int) or isinstance(amount, bool) or amount < 1:
        return "amount_cents must be a positive integer"
    if amount > config.MAX_CHARGE_CENTS:
        return f"amount_cents is above the {config.MAX_CHARGE_CENTS} limit"
    if str(body.get("currency", "")).upper() not in config.SUPPORTED_CURRENCIES:
        return f"currency must be one of {', '.join(config.SUPPORTED_CURRENCIES)}"
    if not body.get("source"):
        return "source (a card token) is required"
    return None


class PaymentApp(ServiceApp):
    """The payment-service app."""

    service = "payment-service"

    def __init__(self, store: PaymentStore, provider: CardProvider) -> None:
        super().__init__()
        self._store = store
        self._provider = provider
        self.router.add("POST", "/v1/payments/charge", self.charge)
        self.router.add("GET", "/v1/payments/{payment_id}", self.get_payment)
        self.router.add("POST", "/v1/payments/{payment_id}/refund", self.refund)

    def charge(self, request: Request) -> Response:
        body = request.body
        problem = validate_charge(body)
        if problem:
            return error_response(422, "invalid_charge", problem)
        merchant_id, amount = str(body["merchant_id"]), body["amount_cents"]
        currency = str(body["currency"]).upper()
        capture = self._provider.capture(amount, currency, str(body["source"]))
        if not capture.approved:
            log.info("charge declined for merchant %s: %s", merchant_id, capture.decline_code)
            return error_response(402, "card_declined", capture.decline_code)
        payment = Payment(self._store.next_id("pay"), merchant_id, amount, currency,
                          "captured", capture.reference)
        self._store.insert(payment)
        log.info("captured %s: %d %s for merchant %s", payment.id, amount, currency, merchant_id)
        return json_response(201, **payment.to_dict())

    def get_payment(self, request: Request) -> Response:
        payment = self._store.get(request.params["payment_id"])
        if payment is None:
            return error_response(404, "not_found", f"no payment {request.params['payment_id']}")
        return json_response(200, **payment.to_dict())

    def refund(self, request: Request) -> Response:
        payment = self._store.get(request.params["payment_id"])
        if payment is None:
            return error_response(404, "not_found", f"no payment {request.params['payment_id']}")
        remaining = payment.amount_cents - payment.refunded_cents
        amount = request.body.get("amount_cents", remaining)
        if not isinstance(amount, int) or amount < 1 or amount > remaining:
            return error_response(409, "refund_exceeds_payment",
                                  f"can refund 1-{remaining} cents of {payment.id}")
        if not self._provider.refund(payment.provider_ref, amount):
            log.error("provider refused refund of %d on %s", amount, payment.id)
            return error_response(502, "provider_error", "the card provider refused the refund")
        refund = Refund(self._store.next_id("re"), payment.id, amount)
        status = "refunded" if amount == remaining else "partially_refunded"
        self._store.add_refund(refund, status)
        log.info("refunded %d on %s (%s)", amount, payment.id, status)
        return json_response(201, payment_status=status, **refund.to_dict())
