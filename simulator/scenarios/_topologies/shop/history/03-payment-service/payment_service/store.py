"""Where payments live: the Postgres store used in production and an in-memory twin.

Both implement :class:`PaymentStore`; handlers only ever see the protocol.
"""

from __future__ import annotations

import uuid
from typing import Protocol

from payment_service.db import Database
from payment_service.models import Payment, Refund


class PaymentStore(Protocol):
    """Payments and refunds."""

    def next_id(self, prefix: str) -> str: ...

    def insert(self, payment: Payment) -> None: ...

    def get(self, payment_id: str) -> Payment | None: ...

    def add_refund(self, refund: Refund, new_status: str) -> None:
        """Record `refund` and move its payment's refunded total and status along."""


class PostgresPaymentStore:
    """PaymentStore on the ``payments`` database (schema: payment_service/migrations/)."""

    INSERT_PAYMENT = (
        "INSERT INTO payments (id, merchant_id, amount_cents, currency, status, provider_ref, "
        "refunded_cents) VALUES (%s, %s, %s, %s, %s, %s, %s)"
    )
    SELECT_PAYMENT = (
        "SELECT id, merchant_id, amount_cents, currency, status, provider_ref, refunded_cents "
        "FROM payments WHERE id = %s"
    )
    INSERT_REFUND = "INSERT INTO refunds (id, payment_id, amount_cents) VALUES (%s, %s, %s)"
    UPDATE_REFUNDED = (
        "UPDATE payments SET refunded_cents = refunded_cents + %s, status = %s WHERE id = %s"
    )

    def __init__(self, db: Database) -> None:
        self._db = db

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_{uuid.uuid4().hex[:20]}"

    def insert(self, payment: Payment) -> None:
        self._db.execute(self.INSERT_PAYMENT, (
            payment.id, payment.merchant_id, payment.amount_cents, payment.currency,
            payment.status, payment.provider_ref, payment.refunded_cents))

    def get(self, payment_id: str) -> Payment | None:
        rows = self._db.execute(self.SELECT_PAYMENT, (payment_id,))
        return Payment(*rows[0]) if rows else None

    def add_refund(self, refund: Refund, new_status: str) -> None:
        with self._db.transaction():
            self._db.execute(self.INSERT_REFUND, (refund.id, refund.payment_id, refund.amount_cents))
            self._db.execute(self.UPDATE_REFUNDED, (refund.amount_cents, new_status, refund.payment_id))


class InMemoryPaymentStore:
    """PaymentStore in dicts, with sequential ids: local dev and tests."""

    def __init__(self) -> None:
        self.payments: dict[str, Payment] = {}
        self.refunds: list[Refund] = []
        self._sequence = 0

    def next_id(self, prefix: str) -> str:
        self._sequence += 1
        return f"{prefix}_{self._sequence:06d}"

    def insert(self, payment: Payment) -> None:
        if payment.id in self.payments:
            raise ValueError(f"duplicate payment id {payment.id}")
        self.payments[payment.id] = payment

    def get(self, payment_id: str) -> Payment | None:
        return self.payments.get(payment_id)

    def add_refund(self, refund: Refund, new_status: str) -> None:
        payment = self.payments[refund.payment_id]
        payment.refunded_cents += refund.amount_cents
        payment.status = new_status
        self.refunds.append(refund)
