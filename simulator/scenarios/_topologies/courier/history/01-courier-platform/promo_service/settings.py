"""promo-service settings: promotion codes and campaign rules.

DEFAULTS are the reviewed values (RUNBOOK.md has the ranges CI holds them to). The config
service pushes live values over them at runtime, without a deploy: what the service runs with
is in its config history (get_config), not in git. It calls no other Python service.
"""

DEFAULTS = {
    'cache.ttl_s': 300,
    'log_level': 'INFO',
    'log_sampling_pct': 10,
}
