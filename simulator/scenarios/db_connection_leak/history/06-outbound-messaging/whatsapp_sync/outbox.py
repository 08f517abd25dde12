"""The outbox: outbound template messages, queued, sent to the Cloud API, retried.

Backs POST /v1/messages (enqueue) and the sender loop. Each repository call borrows one pooled
connection; the sender holds one of config.MAX_CONCURRENT_SENDS send slots per message.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from whatsapp_sync import config
from whatsapp_sync.db import Pool, pooled
from whatsapp_sync.repository import UnknownMessage

SELECT_OUTBOX = "SELECT message_id, user_id, state, attempts FROM wa_outbox WHERE message_id = $1"
INSERT_OUTBOX = (
    "INSERT INTO wa_outbox (message_id, user_id, template, state, attempts, queued_at)"
    " VALUES ($1, $2, $3, 'queued', 0, $4)"
)
MARK_SENT = "UPDATE wa_outbox SET state = 'sent', sent_at = $2 WHERE message_id = $1"
RECORD_FAILURE = "UPDATE wa_outbox SET attempts = $2, state = $3 WHERE message_id = $1"


class OutboxRepository:
    """Reads and writes of wa_outbox."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def enqueue(self, message_id: str, user_id: str, template: str, at: int) -> bool:
        """Queue a message once; False when the client retried a message already queued."""
        async with pooled(self._pool) as conn:
            if await conn.fetch_one(SELECT_OUTBOX, message_id) is not None:
                return False
            await conn.execute(INSERT_OUTBOX, message_id, user_id, template, at)
            return True

    async def mark_sent(self, message_id: str, at: int) -> bool:
        """Record that the Cloud API accepted a message; False when it was already sent.

        Raises:
            UnknownMessage: no message with this id is queued.
        """
        async with pooled(self._pool) as conn:
            row = await conn.fetch_one(SELECT_OUTBOX, message_id)
            if row is None:
                raise UnknownMessage(message_id)
            if row["state"] == "sent":
                return False
            await conn.execute(MARK_SENT, message_id, at)
            return True

    async def record_failure(self, message_id: str) -> str:
        """Count a failed attempt; the message's state after it ("queued" or "dead").

        Raises:
            UnknownMessage: no message with this id is queued.
        """
        async with pooled(self._pool) as conn:
            row = await conn.fetch_one(SELECT_OUTBOX, message_id)
            if row is None:
                raise UnknownMessage(message_id)
            if row["state"] != "queued":
                return str(row["state"])
            attempts = int(row["attempts"]) + 1
            state = "dead" if attempts >= config.MAX_SEND_ATTEMPTS else "queued"
            await conn.execute(RECORD_FAILURE, message_id, attempts, state)
            return state


class TransportError(RuntimeError):
    """Raised by a transport when the Cloud API refuses or times out a send."""


class Transport(Protocol):
    """The Cloud API client: posts one template message to one user."""

    async def post(self, user_id: str, template: str) -> None: ...


class Sender:
    """Sends queued messages, at most `slots` at a time (the Cloud API's per-number limit)."""

    def __init__(
        self, outbox: OutboxRepository, transport: Transport,
        slots: int = config.MAX_CONCURRENT_SENDS,
    ) -> None:
        self._outbox = outbox
        self._transport = transport
        self._slots = asyncio.Semaphore(slots)
        self._free = slots

    @property
    def free_slots(self) -> int:
        """Send slots no message holds right now."""
        return self._free

    async def send(self, message_id: str, user_id: str, template: str, at: int) -> str:
        """Send one queued message; its state afterwards ("sent", "queued" or "dead")."""
        async with self._slots:
            self._free -= 1
            try:
                try:
                    await self._transport.post(user_id, template)
                except TransportError:
                    return await self._outbox.record_failure(message_id)
                await self._outbox.mark_sent(message_id, at)
                return "sent"
            finally:
                self._free += 1
