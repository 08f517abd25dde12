"""dispatch-service settings: matches orders to couriers.

DEFAULTS are the reviewed values (RUNBOOK.md has the ranges CI holds them to). The config
service pushes live values over them at runtime, without a deploy: what the service runs with
is in its config history (get_config), not in git. It calls geo-service, eta-service.
"""

DEFAULTS = {
    'cache.ttl_s': 300,
    'eta-service.host': 'eta-service.courier.svc.cluster.local',
    'eta-service.retries': 2,
    'eta-service.retry_backoff_ms': 200,
    'eta-service.retry_jitter': True,
    'eta-service.timeout_ms': 500,
    'eta-service.tls': True,
    'geo-service.host': 'geo-service.courier.svc.cluster.local',
    'geo-service.retries': 2,
    'geo-service.retry_backoff_ms': 200,
    'geo-service.retry_jitter': True,
    'geo-service.timeout_ms': 400,
    'geo-service.tls': True,
    'log_level': 'INFO',
    'log_sampling_pct': 10,
}
