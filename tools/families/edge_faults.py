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

import random
import tomllib
from typing import Any

from .authoring import TOPOLOGIES, healthy_check, toml_value

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
    "object-store": "PUT /objects",
    "event-bus": "produce notifications.outbound",
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


# --- symptom-first (twin-faults-v2, parallel-sla-v2) ----------------------------------------
#
# What pages is never a root: each root sits behind a caller in its own part of the platform,
# which fails, pages and names it, while the root stays green (requests that never reach a pod
# that never starts, or fail at the handshake, are not its errors). A commerce release hides in
# this hour's release train; a `noise` axis drawn apart from the split axis holds the times and
# every service's baseline, so no dashboard rank names a root.

TOPOLOGY = tomllib.loads((TOPOLOGIES / "edge_platform" / "topology.toml").read_text("utf-8"))
DEPS: dict[str, list[str]] = {s["name"]: list(s["depends_on"]) for s in TOPOLOGY["services"]}
BASELINE_KEYS = ("cpu", "memory", "error_rate", "p99_ms", "queue_depth")

PAGED_THROUGH = {
    # root: the callers in its own half that fail with it (the first one pages)
    "pricing-service": ["checkout-api", "catalog-api"],
    "inventory-service": ["checkout-api"],
    "payments-service": ["checkout-api"],
    "bank-gateway": ["payments-service"],
    "ledger-service": ["payments-service"],
    "object-store": ["transcoder", "media-cdn"],
    "event-bus": ["notify-api", "webhook-dispatcher", "scheduler"],
    "url-signer": ["media-api", "media-cdn"],
    "transcoder": ["media-api"],
    "webhook-dispatcher": ["notify-api"],
    "scheduler": ["notify-api"],
}
"""Every root has a caller in its own half: what pages is in the view of the role that fixes."""

EDGE = {"catalog-api", "checkout-api", "search-api"}
"""The commerce services the gateway calls: the commerce fault reaches the edge through one."""

TRAIN = (6, 8)
"""Harmless releases this hour (the bad one, when the cause is a release, is one more)."""
SLOTS = TRAIN[1]

RELEASABLE = sorted(VERSIONS)
"""Services a release train can ship: the ones with a release line (edge_faults.VERSIONS)."""


def _caller_line(site: Table, caller: str) -> str:
    """What a caller logs: it names the root and the route; the root's own log tells why."""
    root, route = site["service"], ROUTES[site["service"]]
    if site["category"] == "bad_deployment":
        return f"{root} has no ready endpoints: {route} answered 503; failing the call"
    if site["category"] == "expired_certificate":
        return f"{route} on {root} failed: TLS handshake with {root} refused; failing the call"
    return f"{route} on {root} answered 502 for 40% of calls; failing the call"


def symptom_first(site: Table, rng: random.Random) -> Table:
    """`site` with the root green and its callers paging: the callers' effects and blame.

    The root keeps its own log (the words of its failure, the evidence of its kind); its
    callers fail and name it; the commerce fault reaches the gateway through a caller it calls.
    """
    root = site["service"]
    callers = PAGED_THROUGH[root]
    effects: Table = {}
    logs = [log for log in site["logs"] if log["service"] == root]
    for caller in callers:
        effects[caller] = {"error_rate": round(rng.uniform(0.26, 0.48), 2)}
        logs.append({"service": caller, "level": "ERROR", "lines": [_caller_line(site, caller)]})
    edge = ""
    if root in {"bank-gateway", "ledger-service"}:
        effects["checkout-api"] = {"error_rate": round(rng.uniform(0.12, 0.22), 2)}
        logs.append(
            {
                "service": "checkout-api",
                "level": "ERROR",
                "lines": [
                    "POST /payments/capture on payments-service answered 502: it failed upstream"
                ],
            }
        )
        edge = "checkout-api"
    elif callers[0] in EDGE:
        edge = callers[0]
    if edge:
        effects["api-gateway"] = {"error_rate": round(rng.uniform(0.08, 0.14), 2)}
        logs.append(
            {
                "service": "api-gateway",
                "level": "ERROR",
                "lines": [f"upstream answered 503 on the commerce routes: {edge} is failing"],
            }
        )
    return {
        **site,
        "effects": effects,
        "logs": logs,
        "terminal": [],
        "caller": callers[0],
        # The root stays green: what must recover is the caller that paged.
        "healthy": healthy_check(callers[0]),
    }


def _bumped(version: str, rng: random.Random) -> tuple[str, str]:
    """A harmless release of a service on `version`: (the one before it, the new one)."""
    major, minor, patch = (int(x) for x in version.lstrip("v").split("."))
    minor += rng.randint(0, 3)
    return f"v{major}.{minor}.{patch + 1}", f"v{major}.{minor}.{patch + 2}"


def release_train(site: Table, rng: random.Random) -> Table:
    """The release train of a table of the commerce axis: slots r1-r8 (service, release, new).

    The train's services: first the failing caller's other dependencies (what a responder who
    reads the page would suspect), then others; never the root when its release is the cause
    (its one release is the bad one).
    """
    root, caller = site["service"], site["caller"]
    pool = [s for s in RELEASABLE if not (site["release"] and s == root)]
    near = [d for d in DEPS[caller] if d in pool and d != root]
    rng.shuffle(near)
    rest = [s for s in pool if s not in near]
    rng.shuffle(rest)
    size = rng.randint(*TRAIN)
    chosen = (near + rest)[:size]
    rng.shuffle(chosen)
    out: Table = {}
    for i in range(SLOTS):
        svc = chosen[i] if i < len(chosen) else ""
        prev, new = _bumped(VERSIONS[svc], rng) if svc else ("", "")
        out |= {f"r{i + 1}": svc, f"rp{i + 1}": prev, f"rv{i + 1}": new}
    return out


NOISE = 48
"""Tables of a symptom-first family's `noise` axis: when things went out, how busy each runs."""

LAG, PAGE_LAG = 5, 3
"""The most minutes between the commerce cause and its symptom, and between that and the page."""


def noise(rng: random.Random) -> Table:
    """One table of the `noise` axis, drawn apart from the sites.

    The train's releases, a harmless push and a harmless flag land a minute apart or more over
    11-16 minutes, in no set order; the commerce cause (slot `t0`) among them, its symptom 0-LAG
    minutes later, the page 0-PAGE_LAG minutes later still. The platform fault's change (a
    push or a flag, when it is one) lands further back, as do the other harmless push and
    flag, so neither the oldest nor the newest change of a kind is the cause by rule. Baselines are drawn per seed (a service's own would rank it the
    same every seed).
    """
    newest = rng.randint(3, 12)
    # t0 (the commerce cause), t1-t8 (the train), u1 and u3 (a push and a flag) near the
    # symptom; u2 and u4 (a push and a flag) back where the platform fault began.
    ago = rng.sample(range(newest, newest + rng.randint(11, 16) + 1), SLOTS + 3)
    onset = max(2, ago[0] - rng.randint(0, LAG))
    page = max(1, onset - rng.randint(0, PAGE_LAG))
    b_change, u2, u4 = rng.sample(range(max(ago) + 2, 47), 3)
    out: Table = {
        "t0": ago[0],
        **{f"t{i + 1}": t for i, t in enumerate(ago[1 : SLOTS + 1])},
        "u1": ago[SLOTS + 1],
        "u3": ago[SLOTS + 2],
        "u2": u2,
        "u4": u4,
        "onset": onset,
        "page": page,
        "b_change": b_change,
        "b_onset": b_change - rng.randint(0, 3),
        "good": rng.choice([2880, 4320, 5760]),
    }
    for metric, (lo, hi) in {
        "cpu": (0.1, 0.6),
        "memory": (0.2, 0.68),
        "error_rate": (0.0, 0.003),
        "p99_ms": (5, 300),
        "queue_depth": (1, 12),
    }.items():
        out[metric] = {
            _ident(s["name"]): (
                rng.randint(lo, hi) if isinstance(lo, int) else round(rng.uniform(lo, hi), 4)
            )
            for s in TOPOLOGY["services"]
        }
    return out


def _ident(service: str) -> str:
    return service.replace("-", "_")


def symptom_entries(
    axes: list[tuple[str, list[Table]]], config: dict[str, Table] | None = None
) -> str:
    """One `[[services]]` entry per service: its seed's baseline and the knobs the sites move.

    The knobs' fields are `with_service_fields`'; `config` adds settings by service that
    harmless pushes change.
    """
    blocks = []
    for s in TOPOLOGY["services"]:
        name = s["name"]
        cfg: Table = dict((config or {}).get(name, {}))
        lines = [f'name = "{name}"']
        for axis, sites in axes:
            mine = [x for x in sites if x["service"] == name]
            for x in mine:
                cfg |= x["config"]
            if any(x["clock"] for x in mine):
                lines.append(f'clock_offset_seconds = "{{{{{axis}.clock__{_ident(name)}}}}}"')
            if any(not x["cache_warm"] for x in mine):
                lines.append(f'cache_warm = "{{{{{axis}.cache__{_ident(name)}}}}}"')
        if cfg:
            lines.insert(1, f"config = {toml_value(cfg)}")
        base = {k: f"{{{{noise.{k}.{_ident(name)}}}}}" for k in BASELINE_KEYS}
        blocks.append("[[services]]\n" + "\n".join(lines) + f"\nbaseline = {toml_value(base)}\n")
    return "\n".join(blocks)


__all__ = [
    "CALLERS",
    "NOISE",
    "PAGED_THROUGH",
    "RELEASABLE",
    "VERSIONS",
    "Table",
    "certificate",
    "clock",
    "cold_cache",
    "config",
    "flag",
    "noise",
    "release",
    "release_train",
    "service_entries",
    "symptom_entries",
    "symptom_first",
    "with_service_fields",
]
