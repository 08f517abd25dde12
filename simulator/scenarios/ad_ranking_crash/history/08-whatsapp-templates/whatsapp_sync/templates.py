"""Outbound template messages: approved bodies with numbered placeholders."""

from __future__ import annotations

import re
from typing import Sequence

# Bodies approved by WhatsApp, by template name. Placeholders are 1-based, as in Meta's API.
APPROVED = {
    "order_shipped": "Hi {{1}}, your order {{2}} has shipped and arrives on {{3}}.",
    "appointment_reminder": "Reminder: {{1}}, your appointment is on {{2}} at {{3}}.",
    "otp": "{{1}} is your verification code.",
}

PLACEHOLDER = re.compile(r"\{\{(\d+)\}\}")


class TemplateError(ValueError):
    """Raised when a template's parameters do not fit its placeholders."""


def render_template(body: str, params: Sequence[str]) -> str:
    """Fill the placeholders {{1}}, {{2}}, ... of `body` with `params`, in order.

    Raises:
        TemplateError: a placeholder has no parameter.
    """

    def fill(match: re.Match[str]) -> str:
        index = int(match.group(1))
        if not 1 <= index <= len(params):
            raise TemplateError(f"placeholder #{index} has no parameter ({len(params)} given)")
        return params[index - 1]

    return PLACEHOLDER.sub(fill, body)
