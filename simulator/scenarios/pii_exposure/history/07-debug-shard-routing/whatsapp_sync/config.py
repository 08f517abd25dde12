"""Settings for the WhatsApp business message sync service."""

# Adds a "debug" block (shard, replica) to API responses. On in production while
# {{ticket}} (profiles served from the wrong shard) is open; switch it back off after.
DEBUG = True

# Replica name reported in debug output; the deployment sets it per pod.
REPLICA = "whatsapp-sync-local"

# Connections per replica to postgres, and how long a request waits for one before failing.
POOL_SIZE = 10
ACQUIRE_TIMEOUT_SECONDS = 2.0

# Scope a caller needs to see raw phone numbers and e-mail addresses. Only the support
# console holds it; every other caller gets masked values.
PII_SCOPE = "support:read_pii"

# Delivery statuses WhatsApp reports for an outbound message, in lifecycle order.
MESSAGE_STATUSES = ("sent", "delivered", "read", "failed")
