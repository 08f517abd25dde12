"""orders-api settings: order placement: price, charge, dispatch, confirm.

DEFAULTS are the reviewed values (RUNBOOK.md has the ranges CI holds them to). The config
service pushes live values over them at runtime, without a deploy: what the service runs with
is in its config history (get_config), not in git. It calls pricing-service, payments-service, dispatch-service, notify-service.
"""

DEFAULTS = {
    'cache.ttl_s': 300,
    'db.pool_size': 48,
    'db.statement_timeout_ms': 5000,
    'dispatch-service.host': 'dispatch-service.courier.svc.cluster.local',
    'dispatch-service.retries': 2,
    'dispatch-service.retry_backoff_ms': 200,
    'dispatch-service.retry_jitter': True,
    'dispatch-service.timeout_ms': 1200,
    'dispatch-service.tls': True,
    'log_level': 'INFO',
    'log_sampling_pct': 10,
    'notify-service.host': 'notify-service.courier.svc.cluster.local',
    'notify-service.retries': 2,
    'notify-service.retry_backoff_ms': 200,
    'notify-service.retry_jitter': True,
    'notify-service.timeout_ms': 1500,
    'notify-service.tls': True,
    'payments-service.host': 'payments-service.courier.svc.cluster.local',
    'payments-service.retries': 2,
    'payments-service.retry_backoff_ms': 200,
    'payments-service.retry_jitter': True,
    'payments-service.timeout_ms': 2500,
    'payments-service.tls': True,
    'pricing-service.host': 'pricing-service.courier.svc.cluster.local',
    'pricing-service.retries': 2,
    'pricing-service.retry_backoff_ms': 200,
    'pricing-service.retry_jitter': True,
    'pricing-service.timeout_ms': 600,
    'pricing-service.tls': True,
    'region': 'eu-west-1',
}
