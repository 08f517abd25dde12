"""moneyfmt 1.4.2: money as integer minor units; parsing, display and instalments.

Vendored from the payments-platform repo (libs/moneyfmt); do not edit here, bump the pin in
vendor.txt and re-vendor.
"""

__version__ = "1.4.2"

_DIGITS = {"USD": 2, "EUR": 2, "GBP": 2, "JPY": 0}
_SYMBOLS = {"USD": "$", "EUR": "\u20ac", "GBP": "\u00a3", "JPY": "\u00a5"}


def to_minor(amount, currency="USD"):
    """Parse a decimal amount ("12.5", "3", "0.99") into integer minor units."""
    digits = _DIGITS[currency]
    text = str(amount).strip()
    whole, _, frac = text.partition(".")
    if len(frac) > digits:
        raise ValueError(f"amount {text!r} has more than {digits} decimal places")
    sign = -1 if whole.startswith("-") else 1
    units = abs(int(whole or "0")) * 10**digits
    return sign * (units + int(frac.ljust(digits, "0") or "0"))


def format_money(minor, currency, *, symbol=True):
    """Render minor units for people: "$1,234.56", or "1,234.56 USD" with symbol=False."""
    digits = _DIGITS[currency]
    sign = "-" if minor < 0 else ""
    whole, frac = divmod(abs(minor), 10**digits)
    text = f"{whole:,}" + (f".{frac:0{digits}d}" if digits else "")
    if symbol:
        return f"{sign}{_SYMBOLS[currency]}{text}"
    return f"{sign}{text} {currency}"


def split_evenly(minor, parts):
    """Split minor units into `parts` instalments that add up exactly, larger ones first."""
    base, rest = divmod(minor, parts)
    return [base + 1 if i < rest else base for i in range(parts)]
