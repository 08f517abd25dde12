"""WhatsApp business message sync: delivery webhooks in, user profiles out."""

from whatsapp_sync.api import SyncApi, mask_email, mask_phone, user_payload
from whatsapp_sync.db import Connection, ConnectionPool, Pool, PoolExhausted
from whatsapp_sync.repository import MessageRepository, UnknownMessage, User

__all__ = [
    "Connection",
    "ConnectionPool",
    "MessageRepository",
    "Pool",
    "PoolExhausted",
    "SyncApi",
    "UnknownMessage",
    "User",
    "mask_email",
    "mask_phone",
    "user_payload",
]
