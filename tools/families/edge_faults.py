"""Faults of the edge platform that a team incident combines, one per variant axis.

Both team families (twin-faults, parallel-sla) put several independent faults on the edge
platform (`_topologies/edge_platform`) at once, each drawn by an axis of its own from the sites
below. Every site is a table of the same shape, so one block of templates per axis (in each
family's head.toml, "the fault of axis `a`") declares whatever that fault needs (a good and a
bad release, a config push, a flag, a certificate, a drifted clock, a cold cache), the fault
itself with its evidence, its alert, its state checks and its remedy; a field a kind does not
use stays false or empty and the `when` of its block drops it. The `[[services]]` entries the
knobs need follow from the sites (`service_entries`). The evidence follows simulator/scenarios/README.md
("Evidence vocabulary"): the root's log carries the words of its failure, and each caller's log
names the dependency it blames.
"""

# ruff: noqa: E501  # the rows hold whole log lines; split, they no longer read as logs

from __future__ import annotations

from typing import Any

from .authoring import healthy_check, toml_value

Table = dict[str, Any]

VERSIONS = {
    "catalog-api": "v5.1.0",
    "pricing-service": "v2.9.4",
    "inventory-service": "v2.2.0",
    "checkout-api": "v7.2.1",
    "payments-service": "v5.6.0",
    "bank-gateway": "v1.12.0",
    "ledger-service": "v3.1.1",
    "search-api": "v3.0.6",
    "media-api": "v2.3.0",
    "url-signer": "v1.5.2",
    "transcoder": "v4.0.1",
    "media-cdn": "v3.3.0",
    "notify-api": "v2.0.9",
    "webhook-dispatcher": "v1.6.3",
    "accounts-api": "v3.4.2",
    "scheduler": "v1.3.0",
}
"""The release each service runs in the topology: the bad releases continue from it."""

CALLERS = {
    "catalog-api": ["api-gateway"],
    "pricing-service": ["catalog-api", "checkout-api"],
    "inventory-service": ["checkout-api"],
    "checkout-api": ["api-gateway"],
    "payments-service": ["checkout-api"],
    "bank-gateway": ["payments-service"],
    "ledger-service": ["payments-service"],
    "search-api": ["api-gateway"],
    "media-api": ["api-gateway"],
    "url-signer": ["media-api", "media-cdn"],
    "transcoder": ["media-api"],
    "media-cdn": ["edge-proxy"],
    "notify-api": ["api-gateway"],
    "webhook-dispatcher": ["notify-api"],
    "accounts-api": ["api-gateway"],
    "scheduler": ["notify-api"],
}
"""Who calls each service that can ship a bad release (the topology's edges, reversed)."""

ROUTES = {
    "catalog-api": "GET /v2/catalog/items",
    "pricing-service": "POST /quotes",
    "inventory-service": "POST /holds",
    "checkout-api": "POST /v2/checkout",
    "payments-service": "POST /payments/capture",
    "bank-gateway": "POST /acquirer/authorise",
    "ledger-service": "POST /journal/entries",
    "search-api": "GET /v2/search",
    "media-api": "POST /v2/media/uploads",
    "url-signer": "POST /sign",
    "transcoder": "POST /jobs",
    "media-cdn": "GET /segments",
    "notify-api": "POST /v2/notifications",
    "webhook-dispatcher": "POST /deliveries",
    "accounts-api": "GET /v2/accounts/me",
    "scheduler": "POST /schedules",
}

AUTHORS = ["ines@commerce-team", "lars@payments-team", "mei@media-team", "kofi@platform-team"]

EMPTY: Table = {
    "release": False,
    "good": "",
    "bad": "",
    "config": {},
    "push_key": "",
    "push_value": "",
    "flag": "",
    "cert": "",
    "hosts": [],
    "cert_expires": 0,
    "clock": 0.0,
    "cache_warm": True,
}
"""Every field a kind may leave unused, at its neutral value."""


def _pod(service: str, n: int) -> str:
    return f"{service}-{7 + n}c{4 + n}f9b6d-{'qwx'[n % 3]}{2 + n}k{n}p"


def _caller_logs(service: str, effects: Table, level: str = "ERROR") -> list[Table]:
    """Each caller names the dependency it blames; the callers feel a third of its errors."""
    logs = []
    for n, caller in enumerate(CALLERS[service]):
        effects[caller] = {"error_rate": 0.3}
        logs.append(
            {
                "service": caller,
                "level": level,
                "lines": [
                    f"{service} has no ready endpoints: {ROUTES[service]} answered 503 (request {n + 3}f2a); failing the call"
                ],
            }
        )
    return logs


def release(service: str, mechanism: str, step: int, difficulty: str) -> Table:
    """A bad release of `service`: the good one went out days ago, the bad one minutes ago."""
    major, minor, patch = (int(x) for x in VERSIONS[service].lstrip("v").split("."))
    good = f"v{major}.{minor + step}.{patch + 1}"
    bad = f"v{major}.{minor + step}.{patch + 2}"
    pod = _pod(service, step)
    env = (
        service.upper().replace("-", "_")
        + "_"
        + ["SIGNING_KEYS_URL", "QUOTA_STORE_DSN", "TRACE_EXPORTER"][step % 3]
    )
    root: list[Table]
    if mechanism == "env":
        change = f"read {env} at start"
        root = [
            {
                "service": service,
                "level": "FATAL",
                "lines": [
                    f"{service} {bad} failed to start: required environment variable {env} is not set (read since {bad}; the deployment manifest does not define it)"
                ],
            },
            {
                "service": service,
                "level": "WARN",
                "lines": [
                    f"Back-off restarting failed container {service} in pod {pod} (CrashLoopBackOff, exit code 78)",
                    f"readiness probe failed: 0/3 pods of {service} {bad} ready",
                ],
            },
        ]
        terminal = f"kubectl get pods -l app={service}: {pod}  0/1  CrashLoopBackOff  (restarts: 7)"
        cause = f"{service} {bad} reads the new required environment variable {env}, which its manifest never sets: every pod exits at start"
    elif mechanism == "image":
        change = "a rebuilt image"
        root = [
            {
                "service": service,
                "level": "ERROR",
                "lines": [
                    f'Failed to pull image "registry.relay.internal/{service}:{bad}": manifest unknown: tag {bad} not found (the pipeline pushed {bad}-rc1)'
                ],
            },
            {
                "service": service,
                "level": "WARN",
                "lines": [
                    f'pod {pod}: ImagePullBackOff: Back-off pulling image "registry.relay.internal/{service}:{bad}"',
                    f"readiness probe failed: 0/3 pods of {service} {bad} ready (strategy Recreate: the {good} pods were already terminated)",
                ],
            },
        ]
        terminal = f"kubectl get pods -l app={service}: {pod}  0/1  ImagePullBackOff  (restarts: 0)"
        cause = f"the manifest of {service} {bad} names an image tag the pipeline never pushed; no pod can start"
    else:
        change = "the release job moved to the arm runners"
        root = [
            {
                "service": service,
                "level": "FATAL",
                "lines": [
                    f"container {service} failed to start: exec /app/server: exec format error (image {service}:{bad} is linux/arm64, the node pool is linux/amd64)"
                ],
            },
            {
                "service": service,
                "level": "WARN",
                "lines": [
                    f"Back-off restarting failed container {service} in pod {pod} (CrashLoopBackOff, exit code 1)"
                ],
            },
        ]
        terminal = f"kubectl get pods -l app={service}: {pod}  0/1  CrashLoopBackOff  (restarts: 9)"
        cause = f"the {service} {bad} image was built for linux/arm64 only and cannot run on the amd64 nodes"
    effects: Table = {service: {"error_rate": 1.0}}
    logs = root + _caller_logs(service, effects)
    return {
        **EMPTY,
        "key": f"{service}-{mechanism}",
        "service": service,
        "difficulty": difficulty,
        "kind": "deployment",
        "params": {"bad_version": bad},
        "release": True,
        "good": good,
        "bad": bad,
        "author": AUTHORS[(step + len(service)) % len(AUTHORS)],
        "change": change,
        "effects": effects,
        "logs": logs,
        "terminal": [{"text": terminal}],
        "category": "bad_deployment",
        "location": f"deployment:{service}@{bad}",
        "remediation": "rollback_deployment",
        "check": {
            "name": f"{service} back on {good}",
            "kind": "deployed_version",
            "service": service,
            "version": good,
        },
        "healthy": healthy_check(service),
        "tool": "rollback_deployment",
        "args": {"service": service, "to_version": good},
        "cause": cause,
        "minutes": 3.0,
    }


def _knob(
    service: str,
    key: str,
    difficulty: str,
    params: Table,
    lines: list[str],
    category: str,
    location: str,
    remediation: str,
    tool: str,
    args: Table,
    cause: str,
    minutes: float,
    error_rate: float = 0.35,
    **fields: Any,
) -> Table:
    check = {"name": f"{service} {location} sane", "kind": "knob_ok", "service": service, **params}
    return {
        **EMPTY,
        **fields,
        "key": key,
        "service": service,
        "difficulty": difficulty,
        "kind": "knob",
        "params": params,
        "author": "",
        "change": "",
        "effects": {service: {"error_rate": error_rate}},
        "logs": [{"service": service, "level": "ERROR", "lines": lines}],
        "terminal": [],
        "category": category,
        "location": location,
        "remediation": remediation,
        "check": check,
        "healthy": healthy_check(service),
        "tool": tool,
        "args": args,
        "cause": cause,
        "minutes": minutes,
    }


def certificate(service: str, name: str, host: str, ago: int, difficulty: str) -> Table:
    """A certificate of `service` that expired `ago` minutes before the page."""
    return _knob(
        service,
        f"{service}-cert-{name}",
        difficulty,
        {"knob": f"certificate:{name}", "expired": True},
        [
            f"http: TLS handshake error from 10.20.3.7:48122: remote error: tls: expired certificate ({name}, {host})",
            f"cert-checker: x509: certificate has expired: {name} ({host}), notAfter passed {ago} min before the page; the renewal job was suspended for the change freeze",
        ],
        "expired_certificate",
        f"certificate:{name}",
        "renew_certificate",
        "renew_certificate",
        {"service": service, "certificate": name},
        f"the certificate {name} of {service} ({host}) expired {ago} minutes before the page and every handshake using it fails",
        2.0,
        cert=name,
        hosts=[host],
        cert_expires=-ago,
    )


def clock(service: str, offset: float, line: str, difficulty: str) -> Table:
    """The clock of `service` drifted `offset` seconds off true time."""
    return _knob(
        service,
        f"{service}-clock",
        difficulty,
        {"knob": "clock", "above": 30},
        [line],
        "clock_skew",
        f"service:{service}",
        "sync_clock",
        "sync_clock",
        {"service": service},
        f"the clock of {service} runs {abs(offset):g} s {'ahead' if offset > 0 else 'behind'} since its NTP source went away",
        0.5,
        clock=offset,
    )


def config(service: str, key: str, good: Any, bad: Any, why: str, difficulty: str) -> Table:
    """A config push of `key` on `service` from `good` to `bad`."""
    return _knob(
        service,
        f"{service}-config-{key}",
        difficulty,
        {"knob": f"config:{key}", "bad": [bad]},
        [f"invalid config value {key}={bad}: {why}"],
        "bad_config",
        f"config:{key}",
        "rollback_config",
        "set_config",
        {"service": service, "key": key, "value": good},
        f"a config push set {key} on {service} from {good} to {bad}: {why}",
        1.0,
        config={key: good},
        push_key=key,
        push_value=bad,
    )


def flag(service: str, name: str, error: str, difficulty: str) -> Table:
    """A feature flag of `service` ramped to 100% whose new path fails."""
    return _knob(
        service,
        f"{service}-flag-{name}",
        difficulty,
        {"knob": f"flag:{name}", "above": 0},
        [f"feature flag {name}: {error}"],
        "feature_flag",
        f"flag:{name}",
        "set_feature_flag",
        "set_feature_flag",
        {"flag": name, "rollout_percent": 0},
        f"the feature flag {name} of {service} went to 100% and its new path fails: {error}",
        0.5,
        flag=name,
    )


def cold_cache(service: str, line: str, difficulty: str) -> Table:
    """The cache of `service` came back empty and every request goes to its store."""
    return _knob(
        service,
        f"{service}-cache",
        difficulty,
        {"knob": "cache", "cold": True},
        [line],
        "cache_stampede",
        f"service:{service}",
        "warm_cache",
        "warm_cache",
        {"service": service},
        f"the cache of {service} came back empty after a node replacement and the misses overload its store",
        2.0,
        cache_warm=False,
    )


def _field(kind: str, service: str) -> str:
    return f"{kind}__{service.replace('-', '_')}"


def with_service_fields(sites: list[Table]) -> list[Table]:
    """`sites` with one field per service whose clock or cache some site of the axis moves.

    The scenario's `[[services]]` entries are laid over the topology's by name before the seed
    is rendered, so each such service gets an entry of its own whose field reads the seed's
    table (its drifted clock, its cold cache; neutral in the other tables).
    """
    clocks = sorted({s["service"] for s in sites if s["clock"]})
    caches = sorted({s["service"] for s in sites if not s["cache_warm"]})
    out = []
    for site in sites:
        fields = {
            _field("clock", c): site["clock"] if site["service"] == c else 0.0 for c in clocks
        }
        fields |= {_field("cache", c): site["cache_warm"] or site["service"] != c for c in caches}
        out.append({**site, **fields})
    return out


def service_entries(axis: str, sites: list[Table]) -> str:
    """The `[[services]]` entries an axis's knobs need (see `with_service_fields`)."""
    blocks = []
    for service in sorted({s["service"] for s in sites}):
        mine = [s for s in sites if s["service"] == service]
        config: Table = {}
        for s in mine:
            config |= s["config"]
        lines = [f'name = "{service}"']
        if config:
            lines.append(f"config = {toml_value(config)}")
        if any(s["clock"] for s in mine):
            lines.append(f'clock_offset_seconds = "{{{{{axis}.{_field("clock", service)}}}}}"')
        if any(not s["cache_warm"] for s in mine):
            lines.append(f'cache_warm = "{{{{{axis}.{_field("cache", service)}}}}}"')
        if len(lines) > 1:
            blocks.append("[[services]]\n" + "\n".join(lines) + "\n")
    return "\n".join(blocks)


__all__ = [
    "CALLERS",
    "VERSIONS",
    "Table",
    "certificate",
    "clock",
    "cold_cache",
    "config",
    "flag",
    "release",
    "service_entries",
    "with_service_fields",
]
