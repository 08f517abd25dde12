"""Every service's reviewed defaults stay within RUNBOOK.md's ranges."""

import importlib

PACKAGES = ['edge_gateway', 'orders_api', 'accounts_api', 'payments_service', 'dispatch_service', 'catalog_api', 'courier_api', 'ratings_service', 'pricing_service', 'notify_service', 'menu_service', 'search_service', 'identity_service', 'geo_service', 'eta_service', 'promo_service', 'ledger_service', 'fraud_service', 'push_relay']


def _defaults():
    for name in PACKAGES:
        yield name, importlib.import_module(name + ".settings").DEFAULTS


def test_timeouts_leave_room_for_healthy_calls():
    for name, cfg in _defaults():
        for key, value in cfg.items():
            if key.endswith(".timeout_ms"):
                assert value >= 100, f"{name} {key} = {value}"


def test_retries_are_capped_and_spread_out():
    for name, cfg in _defaults():
        for key, value in cfg.items():
            if key.endswith(".retries"):
                assert 0 <= value <= 3, f"{name} {key} = {value}"
            if key.endswith(".retry_backoff_ms"):
                assert value >= 50, f"{name} {key} = {value}"
            if key.endswith(".retry_jitter"):
                assert value is True, f"{name} {key} = {value}"


def test_clients_point_at_the_production_namespace_over_tls():
    for name, cfg in _defaults():
        for key, value in cfg.items():
            if key.endswith(".host"):
                callee = key[: -len(".host")]
                assert value == callee + ".courier.svc.cluster.local", f"{name} {key}"
            if key.endswith(".tls"):
                assert value is True, f"{name} {key}"


def test_pools_limits_and_logging():
    for name, cfg in _defaults():
        assert cfg["log_level"] in ("INFO", "WARN"), name
        assert cfg.get("db.pool_size", 8) >= 8, name
        assert cfg.get("db.statement_timeout_ms", 1000) >= 1000, name
        assert cfg.get("ratelimit.rps", 1000) >= 1000, name
        assert cfg.get("region", "eu-west-1") == "eu-west-1", name
