"""payment-service configuration: database, card provider and charge limits."""

import os

DATABASE_URL = os.environ.get("PAYMENT_DB_URL", "postgresql://payments@postgres-db:5432/payments")

RUN_MIGRATIONS_ON_START = True
"""Each pod applies pending migrations before it takes traffic; a failed migration stops the pod."""

PROVIDER_URL = os.environ.get("CARD_PROVIDER_URL", "https://api.cardprovider.example/v2")
PROVIDER_TIMEOUT_S = 10.0

SUPPORTED_CURRENCIES = ("EUR", "GBP", "NOK", "SEK", "USD")
MAX_CHARGE_CENTS = 1_000_000
"""Charges above 10,000.00 go through the manual review flow, not this API."""
