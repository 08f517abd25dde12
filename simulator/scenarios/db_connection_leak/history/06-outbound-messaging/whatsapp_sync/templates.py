"""Message templates: what a business may send outside the 24-hour customer-care window.

Backs POST /v1/templates (submit), POST /v1/templates/approve (the review hook) and the
template lookup of every outbound send. Each call borrows one pooled connection.
"""

from __future__ import annotations

from typing import Any

from whatsapp_sync.db import Pool, pooled

SELECT_TEMPLATE = (
    "SELECT name, locale, body, status FROM wa_templates WHERE name = $1 AND locale = $2"
)
INSERT_TEMPLATE = (
    "INSERT INTO wa_templates (name, locale, body, status, updated_at)"
    " VALUES ($1, $2, $3, 'pending', $4)"
)
APPROVE_TEMPLATE = (
    "UPDATE wa_templates SET status = 'approved', updated_at = $3"
    " WHERE name = $1 AND locale = $2"
)

# The locale a template falls back to when the user's own has no approved translation.
FALLBACK_LOCALE = "en_US"


class UnknownTemplate(LookupError):
    """Raised when a template is approved that was never submitted in that locale."""


class TemplateRepository:
    """Reads and writes of wa_templates."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def get_template(self, name: str, locale: str) -> dict[str, Any] | None:
        """The approved template in `locale`, else in FALLBACK_LOCALE; None if neither is."""
        async with pooled(self._pool) as conn:
            row = await conn.fetch_one(SELECT_TEMPLATE, name, locale)
            if row is None or row["status"] != "approved":
                row = await conn.fetch_one(SELECT_TEMPLATE, name, FALLBACK_LOCALE)
            if row is None or row["status"] != "approved":
                return None
            return {"name": row["name"], "locale": row["locale"], "body": row["body"]}

    async def submit_template(self, name: str, locale: str, body: str, at: int) -> bool:
        """Store a template for review; False when that name and locale exist already."""
        async with pooled(self._pool) as conn:
            if await conn.fetch_one(SELECT_TEMPLATE, name, locale) is not None:
                return False
            await conn.execute(INSERT_TEMPLATE, name, locale, body, at)
            return True

    async def approve_template(self, name: str, locale: str, at: int) -> bool:
        """Mark a template approved; False when it already was.

        Raises:
            UnknownTemplate: no template with this name and locale was submitted.
        """
        async with pooled(self._pool) as conn:
            row = await conn.fetch_one(SELECT_TEMPLATE, name, locale)
            if row is None:
                raise UnknownTemplate(f"template {name!r} has no {locale} version")
            if row["status"] == "approved":
                return False
            await conn.execute(APPROVE_TEMPLATE, name, locale, at)
            return True
