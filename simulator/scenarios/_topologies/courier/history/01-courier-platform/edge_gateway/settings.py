"""edge-gateway settings: public HTTPS edge: auth check, routing, rate limiting.

DEFAULTS are the reviewed values (RUNBOOK.md has the ranges CI holds them to). The config
service pushes live values over them at runtime, without a deploy: what the service runs with
is in its config history (get_config), not in git. It calls orders-api, catalog-api, accounts-api, courier-api, ratings-service.
"""

DEFAULTS = {
    'accounts-api.host': 'accounts-api.courier.svc.cluster.local',
    'accounts-api.retries': 2,
    'accounts-api.retry_backoff_ms': 100,
    'accounts-api.retry_jitter': True,
    'accounts-api.timeout_ms': 700,
    'accounts-api.tls': True,
    'cache.ttl_s': 300,
    'catalog-api.host': 'catalog-api.courier.svc.cluster.local',
    'catalog-api.retries': 2,
    'catalog-api.retry_backoff_ms': 100,
    'catalog-api.retry_jitter': True,
    'catalog-api.timeout_ms': 900,
    'catalog-api.tls': True,
    'courier-api.host': 'courier-api.courier.svc.cluster.local',
    'courier-api.retries': 2,
    'courier-api.retry_backoff_ms': 100,
    'courier-api.retry_jitter': True,
    'courier-api.timeout_ms': 800,
    'courier-api.tls': True,
    'log_level': 'INFO',
    'log_sampling_pct': 10,
    'orders-api.host': 'orders-api.courier.svc.cluster.local',
    'orders-api.retries': 2,
    'orders-api.retry_backoff_ms': 100,
    'orders-api.retry_jitter': True,
    'orders-api.timeout_ms': 1800,
    'orders-api.tls': True,
    'ratelimit.rps': 9000,
    'ratings-service.host': 'ratings-service.courier.svc.cluster.local',
    'ratings-service.retries': 2,
    'ratings-service.retry_backoff_ms': 100,
    'ratings-service.retry_jitter': True,
    'ratings-service.timeout_ms': 600,
    'ratings-service.tls': True,
}
