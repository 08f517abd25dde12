"""payments-service settings: card charges and refunds through the acquirer.

DEFAULTS are the reviewed values (RUNBOOK.md has the ranges CI holds them to). The config
service pushes live values over them at runtime, without a deploy: what the service runs with
is in its config history (get_config), not in git. It calls ledger-service, fraud-service.
"""

DEFAULTS = {
    'cache.ttl_s': 300,
    'fraud-service.host': 'fraud-service.courier.svc.cluster.local',
    'fraud-service.retries': 2,
    'fraud-service.retry_backoff_ms': 200,
    'fraud-service.retry_jitter': True,
    'fraud-service.timeout_ms': 600,
    'fraud-service.tls': True,
    'ledger-service.host': 'ledger-service.courier.svc.cluster.local',
    'ledger-service.retries': 2,
    'ledger-service.retry_backoff_ms': 200,
    'ledger-service.retry_jitter': True,
    'ledger-service.timeout_ms': 1500,
    'ledger-service.tls': True,
    'log_level': 'INFO',
    'log_sampling_pct': 10,
    'region': 'eu-west-1',
}
