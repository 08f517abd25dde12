"""payment-service: card charges and refunds, recorded in postgres-db."""

from payment_service.handlers import PaymentApp
from payment_service.models import Payment, Refund
from payment_service.provider import SandboxProvider
from payment_service.store import InMemoryPaymentStore, PostgresPaymentStore

__all__ = [
    "InMemoryPaymentStore",
    "Payment",
    "PaymentApp",
    "PostgresPaymentStore",
    "Refund",
    "SandboxProvider",
]
