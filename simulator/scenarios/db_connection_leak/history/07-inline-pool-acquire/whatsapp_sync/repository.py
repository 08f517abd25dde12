"""Queries on the wa_users and wa_messages tables; each call borrows one pooled connection."""

from __future__ import annotations

from dataclasses import dataclass

from whatsapp_sync.db import Pool, pooled

SELECT_USER = (
    "SELECT user_id, display_name, phone, email, locale, opted_in FROM wa_users"
    " WHERE user_id = $1"
)
SELECT_MESSAGE = "SELECT message_id, status FROM wa_messages WHERE message_id = $1"
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

{{leak.get_user}}

{{leak.save_inbound}}

{{leak.update_status}}
