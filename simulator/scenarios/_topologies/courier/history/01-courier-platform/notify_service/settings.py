"""notify-service settings: order status e-mails, SMS and pushes.

DEFAULTS are the reviewed values (RUNBOOK.md has the ranges CI holds them to). The config
service pushes live values over them at runtime, without a deploy: what the service runs with
is in its config history (get_config), not in git. It calls push-relay.
"""

DEFAULTS = {
    'cache.ttl_s': 300,
    'log_level': 'INFO',
    'log_sampling_pct': 10,
    'push-relay.host': 'push-relay.courier.svc.cluster.local',
    'push-relay.retries': 2,
    'push-relay.retry_backoff_ms': 200,
    'push-relay.retry_jitter': True,
    'push-relay.timeout_ms': 2000,
    'push-relay.tls': True,
}
