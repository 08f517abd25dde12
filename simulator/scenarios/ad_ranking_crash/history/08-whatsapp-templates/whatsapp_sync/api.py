"""Handlers behind the whatsapp_sync HTTP API: delivery webhooks in, user profiles out."""

from __future__ import annotations

import zlib
from typing import Any, Collection, Mapping

from whatsapp_sync import config
from whatsapp_sync.repository import MessageRepository, UnknownMessage, User
from whatsapp_sync.templates import APPROVED, TemplateError, render_template

SHARDS = 16


def mask_phone(phone: str | None) -> str:
    """Keep the last two digits only: "+44 7700 900123" -> "**********23"; "" for no phone."""
    if not phone:
        return ""
    digits = "".join(ch for ch in phone if ch.isdigit())
    return "*" * max(len(digits) - 2, 0) + digits[-2:]


def mask_email(email: str) -> str:
    """Keep the first letter and the domain: "jane.doe@example.com" -> "j***@example.com"."""
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain}" if domain else "***"


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
        body = user_payload(user, reveal_pii=config.PII_SCOPE in scopes)
        if config.DEBUG:
            shard = zlib.crc32(user_id.encode()) % SHARDS
            body["debug"] = {"shard": shard, "replica": config.REPLICA}
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

    async def send_template(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """POST /v1/messages/template: an approved template, filled in for one user."""
        try:
            user_id, name = str(payload["to"]), str(payload["template"])
            params = [str(p) for p in payload.get("params", [])]
        except (KeyError, TypeError) as exc:
            return {"status": 400, "error": f"malformed template request: {exc}"}
        if name not in APPROVED:
            return {"status": 400, "error": f"unknown template {name!r}"}
        user = await self._repo.get_user(user_id)
        if user is None:
            return {"status": 404, "error": f"user {user_id} not found"}
        try:
            text = render_template(APPROVED[name], params)
        except TemplateError as exc:
            return {"status": 400, "error": str(exc)}
        return {"status": 200, "body": {"to": user.user_id, "text": text}}
