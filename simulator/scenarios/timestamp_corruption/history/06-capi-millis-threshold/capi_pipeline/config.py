"""Settings for the conversions API ingest pipeline."""

{{bad.comment}}
MILLIS_THRESHOLD = {{bad.value}}

# Event names we accept; anything else is rejected at the edge rather than stored.
ALLOWED_EVENT_NAMES = frozenset(
    {"AddToCart", "CompleteRegistration", "Lead", "Purchase", "Subscribe"}
)

# ISO 4217 codes accepted for `value`; an unknown code is rejected, never guessed.
SUPPORTED_CURRENCIES = frozenset({"BRL", "EUR", "GBP", "INR", "USD"})
DEFAULT_CURRENCY = "USD"

# Largest batch one API call may post (matches the public CAPI limit).
MAX_BATCH_SIZE = {{bad.batch}}
