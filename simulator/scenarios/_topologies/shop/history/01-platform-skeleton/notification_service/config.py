"""notification-service configuration: the outbox queue and the mail relay."""

import os

REDIS_URL = os.environ.get("NOTIFY_REDIS_URL", "redis://redis-cache:6379/2")
OUTBOX_QUEUE = "notifications:outbox"
"""Redis list the sender workers drain; its length is the service's queue depth."""

SMTP_RELAY = os.environ.get("NOTIFY_SMTP_RELAY", "smtp-relay.shop.internal:587")
MAX_SEND_ATTEMPTS = 5
"""A message that fails this many times goes to the dead-letter list."""
