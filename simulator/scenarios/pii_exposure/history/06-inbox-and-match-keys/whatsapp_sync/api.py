"""Handlers behind the whatsapp_sync HTTP API: delivery webhooks in, user profiles out."""

from __future__ import annotations

import zlib
from typing import Any, Collection, Mapping

from whatsapp_sync import audit, config
from whatsapp_sync.masking import mask_email, mask_phone
from whatsapp_sync.repository import MessageRepository, UnknownMessage, User

SHARDS = 16

__all__ = ["SHARDS", "SyncApi", "mask_email", "mask_phone", "user_payload"]


def user_payload(user: User, *, reveal_pii: bool) -> dict[str, Any]:
    """The public view of a user; raw phone and e-mail only when `reveal_pii` is set."""
    return {
        "user_id": user.user_id,
        "display_name": user.display_name,
        "locale": user.locale,
        "opted_in": user.opted_in,
        "phone": user.phone if reveal_pii else mask_phone(user.phone),
        "email": user.email if reveal_pii else mask_email(user.email),
    }


class SyncApi:
    """The service's request handlers; each returns {"status": ..., "body" | "error": ...}."""

    def __init__(self, repo: MessageRepository) -> None:
        self._repo = repo

    async def get_profile(self, user_id: str, scopes: Collection[str] = ()) -> dict[str, Any]:
        """GET /v1/users/{user_id}: PII is masked unless the caller holds config.PII_SCOPE."""
        user = await self._repo.get_user(user_id)
        if user is None:
            return {"status": 404, "error": f"user {user_id} not found"}
        reveal = config.PII_SCOPE in scopes
        body = user_payload(user, reveal_pii=reveal)
        if config.DEBUG:
            shard = zlib.crc32(user_id.encode()) % SHARDS
            body["debug"] = {"shard": shard, "replica": config.REPLICA}
        audit.record_profile_read(user, scopes, revealed=reveal)
        return {"status": 200, "body": body}

    async def inbound_webhook(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """POST /v1/webhooks/inbound: a user sent the business a message."""
        try:
            message_id, user_id = str(payload["message_id"]), str(payload["from"])
            body, at = str(payload.get("text", "")), int(payload["timestamp"])
        except (KeyError, TypeError, ValueError) as exc:
            return {"status": 400, "error": f"malformed inbound webhook: {exc}"}
        stored = await self._repo.save_inbound(message_id, user_id, body, at)
        return {"status": 200, "body": {"message_id": message_id, "duplicate": not stored}}

    async def status_webhook(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """POST /v1/webhooks/status: WhatsApp reports a delivery status change."""
        status = payload.get("status")
        if status not in config.MESSAGE_STATUSES:
            return {"status": 400, "error": f"unknown message status {status!r}"}
        message_id = str(payload.get("message_id", ""))
        try:
            changed = await self._repo.update_status(message_id, status, int(payload["timestamp"]))
        except UnknownMessage:
            return {"status": 404, "error": f"message {message_id} not found"}
        except (KeyError, TypeError, ValueError) as exc:
            return {"status": 400, "error": f"malformed status webhook: {exc}"}
        body = {"message_id": message_id, "status": status, "changed": changed}
        return {"status": 200, "body": body}
