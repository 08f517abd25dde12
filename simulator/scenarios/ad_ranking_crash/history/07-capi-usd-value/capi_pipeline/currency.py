"""Conversion values in US dollars, for the totals Events Manager shows per batch."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

# US dollars per unit of each supported currency (config.SUPPORTED_CURRENCIES), refreshed
# weekly by the finance job. Decimal, not float: totals must add up to the cent.
USD_PER_UNIT = {
    "USD": Decimal("1"),
    "EUR": Decimal("1.08"),
    "GBP": Decimal("1.27"),
    "BRL": Decimal("0.2"),
    "INR": Decimal("0.012"),
}


def to_usd_micros(value_micros: int, currency: str) -> int:
    """`value_micros` of `currency` in micro-dollars, rounded half to even."""
    rate = USD_PER_UNIT[currency]
    return int((value_micros * rate).to_integral_value(rounding=ROUND_HALF_EVEN))
