"""The business inbox's views of a user: contact cards, search hits, exports, notifications.

Raw contact details are for callers holding config.PII_SCOPE (the support console); everyone
else, the inbox itself included, sees masked ones.
"""

from __future__ import annotations

from typing import Any, Collection

from whatsapp_sync import config
from whatsapp_sync.masking import mask_email, mask_phone
from whatsapp_sync.repository import User


def contact_card(user: User, scopes: Collection[str] = ()) -> dict[str, Any]:
    """The card shown beside a conversation."""
    reveal = config.PII_SCOPE in scopes
    return {
        "user_id": user.user_id,
        "display_name": user.display_name,
        "locale": user.locale,
        "phone": user.phone if reveal else mask_phone(user.phone),
        "email": user.email if reveal else mask_email(user.email),
    }


def search_hit(user: User) -> dict[str, Any]:
    """One hit of the inbox search box: who it is, and the phone's last two digits."""
    return {
        "user_id": user.user_id,
        "display_name": user.display_name,
        "phone_hint": mask_phone(user.phone),
    }


def export_row(user: User, scopes: Collection[str] = ()) -> list[str]:
    """One CSV row of the contacts export: id, name, phone, e-mail, opted in."""
    reveal = config.PII_SCOPE in scopes
    phone = user.phone if reveal else mask_phone(user.phone)
    email = user.email if reveal else mask_email(user.email)
    return [user.user_id, user.display_name, phone, email, "yes" if user.opted_in else "no"]


def notification(user: User, text: str) -> dict[str, str]:
    """The push notification for a new inbound message: sender and the message's start."""
    return {
        "title": user.display_name,
        "subtitle": mask_phone(user.phone),
        "body": text[:40],
    }
