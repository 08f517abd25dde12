"""Settings for the conversions API ingest pipeline."""

# Server-side integrations send event_time in epoch seconds; the browser pixel and the mobile
# SDKs send epoch milliseconds. A value at or above this threshold is read as milliseconds:
# 10**10 seconds is the year 2286 and 10**10 milliseconds is April 1970, so no real event
# time is ambiguous.
MILLIS_THRESHOLD = 10_000_000_000

# Event names we accept; anything else is rejected at the edge rather than stored.
ALLOWED_EVENT_NAMES = frozenset(
    {"AddToCart", "CompleteRegistration", "Lead", "Purchase", "Subscribe"}
)

# ISO 4217 codes accepted for `value`; an unknown code is rejected, never guessed.
SUPPORTED_CURRENCIES = frozenset({"BRL", "EUR", "GBP", "INR", "USD"})
DEFAULT_CURRENCY = "USD"

# Largest batch one API call may post (matches the public CAPI limit).
MAX_BATCH_SIZE = 1000

# Connections per replica of the async ingest worker to postgres, and how long a batch waits
# for one before the worker gives up and the advertiser's call fails with 503.
POOL_SIZE = 12
ACQUIRE_TIMEOUT_SECONDS = 2.0

# Conversions older than this are purged from conversion_events (the attribution window plus a
# week of slack).
RETENTION_DAYS = 14
