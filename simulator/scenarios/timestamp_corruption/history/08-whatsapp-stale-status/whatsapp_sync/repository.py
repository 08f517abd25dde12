"""Queries on the wa_users and wa_messages tables; each call borrows one pooled connection."""

from __future__ import annotations

from dataclasses import dataclass

from whatsapp_sync.db import Pool, pooled

SELECT_USER = (
    "SELECT user_id, display_name, phone, email, locale, opted_in FROM wa_users"
    " WHERE user_id = $1"
)
SELECT_MESSAGE = "SELECT message_id, status, updated_at FROM wa_messages WHERE message_id = $1"
INSERT_MESSAGE = (
    "INSERT INTO wa_messages (message_id, user_id, body, status, updated_at)"
    " VALUES ($1, $2, $3, 'received', $4)"
)
UPDATE_STATUS = "UPDATE wa_messages SET status = $2, updated_at = $3 WHERE message_id = $1"


class UnknownMessage(LookupError):
    """Raised when a status update names a message we never stored."""


@dataclass(frozen=True, slots=True)
class User:
    """A WhatsApp business user. phone and email are PII: see api.user_payload."""

    user_id: str
    display_name: str
    phone: str
    email: str
    locale: str
    opted_in: bool


class MessageRepository:
    """Reads and writes for the sync API."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def get_user(self, user_id: str) -> User | None:
        async with pooled(self._pool) as conn:
            row = await conn.fetch_one(SELECT_USER, user_id)
        return None if row is None else User(**row)

    async def save_inbound(self, message_id: str, user_id: str, body: str, at: int) -> bool:
        """Store an inbound message once; False when WhatsApp redelivered it."""
        async with pooled(self._pool) as conn:
            if await conn.fetch_one(SELECT_MESSAGE, message_id) is not None:
                return False
            await conn.execute(INSERT_MESSAGE, message_id, user_id, body, at)
            return True

    async def update_status(self, message_id: str, status: str, at: int) -> bool:
        """Record a delivery status; False when the message already had it, or when the update
        is older than the stored one (WhatsApp retries webhooks out of order).

        Raises:
            UnknownMessage: no message with this id was stored.
        """
        async with pooled(self._pool) as conn:
            row = await conn.fetch_one(SELECT_MESSAGE, message_id)
            if row is None:
                raise UnknownMessage(message_id)
            if row["status"] == status:
                return False
            if at < (row.get("updated_at") or 0):
                return False
            await conn.execute(UPDATE_STATUS, message_id, status, at)
            return True
