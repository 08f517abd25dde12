"""checkout-service configuration: deadlines and retries toward order-service.

A checkout can wait up to (1 + ORDER_RETRIES) * ORDER_TIMEOUT_S = 12 s for order-service before
it gives up: keep the gateway's /v1/checkout deadline above that.
"""

ORDER_SERVICE = "order-service"
ORDER_TIMEOUT_S = 4.0
ORDER_RETRIES = 2
"""Extra attempts after a timeout, an unreachable order-service or a 5xx answer."""

NOTIFICATION_SERVICE = "notification-service"
NOTIFY_TIMEOUT_S = 1.0
"""The confirmation e-mail is best effort: a slow notification-service must not fail checkout."""
