"""Settings for the WhatsApp business message sync service."""

# Adds a "debug" block (shard, replica) to API responses. For local runs only: never enable
# it in production.
DEBUG = False

# Replica name reported in debug output; the deployment sets it per pod.
REPLICA = "whatsapp-sync-local"

# Connections per replica to postgres, and how long a request waits for one before failing.
POOL_SIZE = {{pool.size}}
ACQUIRE_TIMEOUT_SECONDS = {{pool.timeout}}

# Scope a caller needs to see raw phone numbers and e-mail addresses. Only the support
# console holds it; every other caller gets masked values.
PII_SCOPE = "support:read_pii"

# Outbound sends in flight per replica (the Cloud API's per-number concurrency limit), and
# how many failed attempts make a queued message dead.
MAX_CONCURRENT_SENDS = 8
MAX_SEND_ATTEMPTS = 3

# Attachments: the largest we accept, and how many blob handles a replica may hold open.
MAX_MEDIA_BYTES = 16 * 1024 * 1024
MAX_OPEN_MEDIA = 1024

# Delivery statuses WhatsApp reports for an outbound message, in lifecycle order.
MESSAGE_STATUSES = ("sent", "delivered", "read", "failed")
