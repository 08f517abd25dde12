"""Opt-outs: users who replied STOP. Nothing may be sent to them until they opt back in.

Backs POST /v1/webhooks/optout, the opt-in page, and the check before every outbound send.
Each call borrows one pooled connection.
"""

from __future__ import annotations

from whatsapp_sync.db import Pool, pooled

SELECT_OPT_OUT = "SELECT user_id, opted_out_at, reason FROM wa_opt_outs WHERE user_id = $1"
INSERT_OPT_OUT = "INSERT INTO wa_opt_outs (user_id, opted_out_at, reason) VALUES ($1, $2, $3)"
DELETE_OPT_OUT = "DELETE FROM wa_opt_outs WHERE user_id = $1"


class OptOutRepository:
    """Reads and writes of wa_opt_outs."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def record_opt_out(self, user_id: str, at: int, reason: str) -> bool:
        """Remember that `user_id` opted out; False when they already had."""
        async with pooled(self._pool) as conn:
            if await conn.fetch_one(SELECT_OPT_OUT, user_id) is not None:
                return False
            await conn.execute(INSERT_OPT_OUT, user_id, at, reason)
            return True

    async def may_message(self, user_id: str) -> bool:
        """Whether the business may message `user_id` (they have not opted out)."""
        async with pooled(self._pool) as conn:
            row = await conn.fetch_one(SELECT_OPT_OUT, user_id)
        return row is None

    async def opt_back_in(self, user_id: str) -> bool:
        """Forget an opt-out; False when `user_id` had not opted out."""
        async with pooled(self._pool) as conn:
            if await conn.fetch_one(SELECT_OPT_OUT, user_id) is None:
                return False
            await conn.execute(DELETE_OPT_OUT, user_id)
            return True
