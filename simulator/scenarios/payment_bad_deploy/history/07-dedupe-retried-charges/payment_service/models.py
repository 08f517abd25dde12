"""Payment and refund records, as stored in the ``payments`` and ``refunds`` tables."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Payment:
    """A captured card charge."""

    id: str
    merchant_id: str
    amount_cents: int
    currency: str
    status: str
    """captured, partially_refunded or refunded."""
    provider_ref: str
    """The card provider's charge id, needed to refund."""
    refunded_cents: int = 0
    {{missing_column}}: str | None = None
    """Set by the merchant on charges that may be retried; unique per merchant."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Refund:
    """Money given back on a payment."""

    id: str
    payment_id: str
    amount_cents: int
    reason: str | None = None
    """customer_request, duplicate, fraudulent or other; None on refunds before PAY-1102."""

    def to_dict(self) -> dict:
        return asdict(self)
