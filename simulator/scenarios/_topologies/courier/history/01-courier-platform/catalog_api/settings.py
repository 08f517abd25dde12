"""catalog-api settings: restaurant and menu pages.

DEFAULTS are the reviewed values (RUNBOOK.md has the ranges CI holds them to). The config
service pushes live values over them at runtime, without a deploy: what the service runs with
is in its config history (get_config), not in git. It calls menu-service, search-service.
"""

DEFAULTS = {
    'cache.ttl_s': 300,
    'log_level': 'INFO',
    'log_sampling_pct': 10,
    'menu-service.host': 'menu-service.courier.svc.cluster.local',
    'menu-service.retries': 2,
    'menu-service.retry_backoff_ms': 200,
    'menu-service.retry_jitter': True,
    'menu-service.timeout_ms': 500,
    'menu-service.tls': True,
    'search-service.host': 'search-service.courier.svc.cluster.local',
    'search-service.retries': 2,
    'search-service.retry_backoff_ms': 200,
    'search-service.retry_jitter': True,
    'search-service.timeout_ms': 700,
    'search-service.tls': True,
}
