"""How contact details look to anyone without the PII scope: one home for the masks.

Every view of a user (profiles, the inbox's contact cards, search, exports, notifications, the
audit trail) masks through these two functions.
"""

from __future__ import annotations


def mask_phone(phone: str) -> str:
    """Keep the last two digits only: "+44 7700 900123" -> "**********23"."""
    digits = "".join(ch for ch in phone if ch.isdigit())
    return "*" * max(len(digits) - 2, 0) + digits[-2:]


def mask_email(email: str) -> str:
    """Keep the first letter and the domain: "jane.doe@example.com" -> "j***@example.com"."""
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain}" if domain else "***"
