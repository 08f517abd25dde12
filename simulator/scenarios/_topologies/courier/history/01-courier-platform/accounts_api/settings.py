"""accounts-api settings: customer accounts, addresses and sessions.

DEFAULTS are the reviewed values (RUNBOOK.md has the ranges CI holds them to). The config
service pushes live values over them at runtime, without a deploy: what the service runs with
is in its config history (get_config), not in git. It calls identity-service.
"""

DEFAULTS = {
    'cache.ttl_s': 300,
    'identity-service.host': 'identity-service.courier.svc.cluster.local',
    'identity-service.retries': 2,
    'identity-service.retry_backoff_ms': 200,
    'identity-service.retry_jitter': True,
    'identity-service.timeout_ms': 500,
    'identity-service.tls': True,
    'log_level': 'INFO',
    'log_sampling_pct': 10,
}
