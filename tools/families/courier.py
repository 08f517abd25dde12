"""The `site` axes of the families on the courier platform, from the platform's data.

bad-config-push, retry-storm and disk-full (their modules in `axes/` call `family_axes`): `site`
says where the fault lives, how it shows, what fixes it, and the shape of the platform around
it; each family's red-herring axis is in its head.toml.
"""

from __future__ import annotations

import random
from typing import Any

from .authoring import BARE_DASHED_KEYS, toml_table
from .courier_platform import (
    BY_NAME,
    DOMAIN,
    SERVICES,
    app_deps,
    callers_of,
    config_of,
    path_to_edge,
    upstream,
)

Site = dict[str, Any]
"""One table of a family's `site` axis."""

OPTIONAL = [s for s in SERVICES if not s.core]
CORE = [s.name for s in SERVICES if s.core]


def shape(required: list[str], rng: random.Random) -> tuple[dict[str, bool], set[str]]:
    """Which optional services run.

    Those `required` and their callers up to the edge, then random others until the platform
    has 10 to 14 services.
    """
    present = set(CORE)
    for name in required:
        present.update(path_to_edge(name))
    target = rng.randint(10, 14)
    others = [s.name for s in OPTIONAL if s.name not in present]
    rng.shuffle(others)
    for name in others:
        if len(present) >= target:
            break
        present.add(name)
    return {s.ident: s.name in present for s in OPTIONAL}, present


def symptom_effects(
    root: str, present: set[str], error: float, p99: float
) -> dict[str, dict[str, float]]:
    """Effects on the services that call `root`, directly or not: fainter further up."""
    out = {}
    for depth, caller in enumerate(upstream(root, present)):
        scale = 0.6 if caller in BY_NAME[root].deps or root in BY_NAME[caller].deps else 0.4
        out[caller] = {
            "error_rate": round(max(0.08, error * scale), 3),
            "p99_ms": float(round(p99 * scale)),
        }
        if depth >= 4:
            break
    return out


def symptom_logs(
    root: str,
    present: set[str],
    text: list[str],
    limit: int = 3,
    store_text: tuple[str, ...] = (),
) -> Site:
    """Up to `limit` caller log blocks, as flat fields s1..s3 (a table list cannot be spliced)."""
    callers = [c for c in upstream(root, present) if root in BY_NAME[c].deps][:limit]
    if "edge-gateway" not in callers and root != "edge-gateway" and len(callers) < limit:
        callers.append("edge-gateway")
    fields: Site = {}
    for i in range(limit):
        if i < len(callers):
            c = callers[i]
            # A caller blames the service it calls: the root, or the next hop toward it.
            hop = root if root in BY_NAME[c].deps else path_to_edge(root)[1]
            fields[f"s{i + 1}"] = c
            # A database, cache, index or broker does not answer 5xx: it rejects writes.
            said = store_text if store_text and not BY_NAME[hop].code else text
            fields[f"s{i + 1}_lines"] = [t.format(caller=c, root=hop) for t in said]
        else:
            fields[f"s{i + 1}"] = ""
            fields[f"s{i + 1}_lines"] = []
    return fields


def gateway_alert(root: str) -> list[dict[str, Any]]:
    """The gateway's 5xx page, unless the gateway is the root itself."""
    if root == "edge-gateway":
        return []
    return [
        {
            "service": "edge-gateway",
            "metric": "error_rate",
            "above": 0.05,
            "severity": "P1",
            "summary": "edge-gateway 5xx rate above 5%",
        }
    ]


def symptoms_of(root: str, present: set[str]) -> list[str]:
    """The services that show the root's failure."""
    return list(symptom_effects(root, present, 0.2, 100))


# -- bad-config-push --------------------------------------------------------------------------

OPS = {
    "orders-api": "POST /v1/orders",
    "catalog-api": "GET /v1/restaurants",
    "courier-api": "POST /v1/courier/offers",
    "ratings-service": "POST /v1/ratings",
    "payments-service": "POST /v1/charges",
    "notify-service": "POST /v1/notifications",
    "pricing-service": "POST /v1/quotes",
    "ledger-service": "POST /v1/entries",
    "eta-service": "POST /v1/eta",
    "search-service": "GET /v1/search",
    "geo-service": "GET /v1/zones/lookup",
    "push-relay": "POST /v1/push",
    "accounts-api": "GET /v1/accounts/me",
    "promo-service": "POST /v1/promos/evaluate",
    "fraud-service": "POST /v1/score",
    "dispatch-service": "POST /v1/dispatch",
    "identity-service": "POST /v1/tokens/verify",
    "menu-service": "GET /v1/menus",
}

CONFIG_SITES = [
    # (service, mechanism, argument, bad value)
    ("orders-api", "timeout", "pricing-service", 40),
    ("payments-service", "timeout", "ledger-service", 60),
    ("dispatch-service", "timeout", "eta-service", 30),
    ("catalog-api", "timeout", "search-service", 45),
    ("courier-api", "timeout", "geo-service", 25),
    ("notify-service", "timeout", "push-relay", 80),
    ("edge-gateway", "timeout", "accounts-api", 35),
    ("pricing-service", "timeout", "promo-service", 15),
    ("orders-api", "pool", "orders-db", 3),
    ("ledger-service", "pool", "ledger-db", 2),
    ("ratings-service", "pool", "orders-db", 1),
    ("orders-api", "statement", "orders-db", 25),
    ("ledger-service", "statement", "ledger-db", 40),
    ("payments-service", "host", "fraud-service", "fraud-service.staging.svc.cluster.local"),
    ("orders-api", "host", "dispatch-service", "dispatch-service.courier-canary.svc.cluster.local"),
    ("accounts-api", "host", "identity-service", "identity-svc.courier.svc.cluster.local"),
    ("eta-service", "host", "geo-service", "geo-service.courier-dr.svc.cluster.local"),
    ("catalog-api", "host", "menu-service", "menus.courier.svc.cluster.local"),
    ("identity-service", "ratelimit", "", 30),
    ("pricing-service", "ratelimit", "", 50),
    ("geo-service", "ratelimit", "", 120),
    ("menu-service", "ratelimit", "", 25),
    ("edge-gateway", "ratelimit", "", 90),
    ("payments-service", "region", "", "us-east-1"),
    ("orders-api", "region", "", "us-east-1"),
    ("ledger-service", "region", "", "eu-central-1"),
    ("payments-service", "tls", "fraud-service", False),
    ("orders-api", "tls", "payments-service", False),
    ("courier-api", "tls", "dispatch-service", False),
]


DIFFICULTY = {
    # The root's own log names the key: the alerts point at it.
    "timeout": "easy",
    "ratelimit": "easy",
    # The root's log blames a dependency (a database, a callee) that is healthy.
    "pool": "medium",
    "statement": "medium",
    "tls": "medium",
    "host": "hard",
    "region": "hard",
}


def config_site(i: int, service: str, mech: str, arg: str, bad: Any, rng: random.Random) -> Site:
    """The bad-config-push site of `service` pushing `bad` through mechanism `mech`."""
    cfg = config_of(BY_NAME[service])
    required = [service] + ([arg] if arg else [])
    on, present = shape(required, rng)
    ago = rng.choice([9, 11, 13, 16, 19, 23])
    cond: dict[str, Any]
    if mech == "timeout":
        key, cond = f"{arg}.timeout_ms", {"below": 100}
        op = OPS.get(arg, "POST /v1/call")
        warn = [
            f"{rng.randint(38, 71)}% of calls to {arg} cut off by the client timeout: config"
            f" value {arg}.timeout_ms={bad} while {arg} answers in {rng.randint(60, 140)} ms p50",
        ]
        error = [
            f"{op} to {arg} cancelled after {bad} ms (client timeout {arg}.timeout_ms={bad});"
            " answering 504",
        ]
        eff = {"error_rate": 0.42, "p99_ms": 300.0}
        title = f"calls from {service} to {arg} time out"
        why = (
            f"{service}'s client timeout for {arg} was pushed from {cfg[key]} ms to {bad} ms,"
            f" shorter than {arg}'s ordinary latency, so most calls are cut off"
        )
    elif mech == "pool":
        key, cond = "db.pool_size", {"below": 8}
        warn = [
            f"request waited {rng.randint(900, 2400)} ms for a free {arg} connection: config"
            f" value db.pool_size={bad}, {rng.randint(60, 190)} requests waiting",
        ]
        error = [
            f"gave up after 2500 ms waiting for a {arg} connection (db.pool_size={bad});"
            " answering 503"
        ]
        eff = {"error_rate": 0.31, "p99_ms": 2400.0, "queue_depth": 120.0}
        title = f"{service} starved of database connections"
        why = (
            f"{service}'s db.pool_size was pushed from {cfg[key]} to {bad}, fewer connections"
            " than its workers, so requests queue for a connection and time out"
        )
    elif mech == "statement":
        key, cond = "db.statement_timeout_ms", {"below": 1000}
        warn = [
            f"{arg} cancelled {rng.randint(40, 80)}% of queries after {bad} ms: config value"
            f" db.statement_timeout_ms={bad}"
        ]
        error = [
            f"{arg} query cancelled after {bad} ms (db.statement_timeout_ms={bad}); answering 500",
        ]
        eff = {"error_rate": 0.38, "p99_ms": 150.0}
        title = f"{service} queries cancelled"
        why = (
            f"{service}'s db.statement_timeout_ms was pushed from {cfg[key]} to {bad} ms, so"
            f" ordinary {arg} queries are cancelled"
        )
    elif mech == "host":
        key, cond = f"{arg}.host", {"good": [f"{arg}.{DOMAIN}"]}
        warn = [f"{arg} client has no healthy endpoint: config value {arg}.host={bad}"]
        error = [
            f"cannot reach {arg} at {bad}:443 (getaddrinfo: Name or service not known);"
            f" {arg}.host={bad}",
        ]
        eff = {"error_rate": 0.47, "p99_ms": 120.0}
        title = f"{service} cannot reach {arg}"
        why = (
            f"{service}'s {arg}.host was pushed from {cfg[key]} to {bad}, a name outside the"
            " production namespace, so every call fails to resolve"
        )
    elif mech == "ratelimit":
        key, cond = "ratelimit.rps", {"below": 1000}
        warn = [
            f"admission limit hit: config value ratelimit.rps={bad}, rejected"
            f" {rng.randint(3000, 9000)} of {rng.randint(9500, 14000)} requests with 429 in the"
            " last minute",
        ]
        error = [
            f"429 Too Many Requests to {rng.randint(55, 85)}% of callers (ratelimit.rps={bad})"
        ]
        eff = {"error_rate": 0.45, "p99_ms": 40.0}
        title = f"{service} rejects most requests with 429"
        why = (
            f"{service}'s own ratelimit.rps was pushed from {cfg[key]} to {bad}, far below its"
            " ordinary request rate, so it answers most requests with 429"
        )
    elif mech == "tls":
        key, cond = f"{arg}.tls", {"bad": [False]}
        warn = [
            f"{arg} client speaks plain HTTP: config value {arg}.tls=false, but {arg} listens"
            " on HTTPS only"
        ]
        error = [
            f"{arg} closed the connection: plain HTTP request sent to an HTTPS port"
            f" ({arg}.tls=false); answering 502",
        ]
        eff = {"error_rate": 0.44, "p99_ms": 90.0}
        title = f"{service} calls to {arg} rejected"
        why = (
            f"{service}'s {arg}.tls was pushed from true to false: it sends plain HTTP to"
            f" {arg}, which listens on HTTPS only and drops every call"
        )
    else:  # region
        key, cond = "region", {"good": ["eu-west-1"]}
        dep = {
            "payments-service": "the acquirer",
            "orders-api": "orders-db",
            "ledger-service": "ledger-db",
        }[service]
        warn = [
            f"config value region={bad}, but {dep} serves eu-west-1 only: requests routed"
            " across regions"
        ]
        error = [
            f"write rejected by {dep}: tenant courier-eu is not provisioned in {bad}"
            f" (region={bad}); answering 502",
        ]
        eff = {"error_rate": 0.36, "p99_ms": 480.0}
        title = f"{service} writes rejected after a region change"
        why = (
            f"{service}'s region was pushed from eu-west-1 to {bad}; its data and accounts live"
            f" in eu-west-1, so {dep} rejects its writes"
        )
    good = cfg[key]
    root_eff = {k: v for k, v in eff.items()}
    effects = {service: root_eff, **symptom_effects(service, present, eff["error_rate"], 900)}
    alerts = [
        *gateway_alert(service),
        {
            "service": service,
            "metric": "error_rate",
            "above": 0.1,
            "severity": "P2",
            "summary": f"{service} error rate above 10%",
        },
    ]
    knob = f"config:{key}"
    return {
        "key_": f"{service}/{key}",
        "on": on,
        "service": service,
        "team": BY_NAME[service].team,
        "config_key": key,
        "bad": bad,
        "good": good,
        "mechanism": mech,
        "ago": ago,
        "params": {"knob": knob, **cond},
        "knob": knob,
        "state_checks": [
            {
                "name": f"{service} {key} back in its safe range",
                "kind": "knob_ok",
                "service": service,
                "knob": knob,
                **cond,
            },
            {"name": f"{service} healthy", "kind": "healthy", "service": service},
        ]
        + (
            [{"name": "edge-gateway healthy", "kind": "healthy", "service": "edge-gateway"}]
            if service != "edge-gateway"
            else []
        ),
        "effects": effects,
        "warn": warn,
        "error": error,
        **symptom_logs(
            service,
            present,
            ["upstream {root} answered 5xx to 31% of calls in the last minute"],
        ),
        "alerts": alerts,
        "symptoms": symptoms_of(service, present),
        "title": title,
        "why": why,
        "neighbour_key": "cache.ttl_s",
        "neighbour_value": 600,
        "other": next(
            c for c in ("dispatch-service", "accounts-api", "payments-service") if c != service
        ),
        "difficulty": DIFFICULTY[mech],
    }


# -- retry-storm ------------------------------------------------------------------------------

BLIPS = {
    "orders-api": "2% of order writes slow while the orders table is vacuumed",
    "catalog-api": "1.5% of catalog pages slow: page cache cold on one pod",
    "accounts-api": "2% of account reads slow: one cache replica resyncing",
    "courier-api": "3% of pings slow: batching window widened on one pod",
    "ratings-service": "2% of rating writes slow: index rebuild on ratings",
    "pricing-service": "2% of quotes slow: surge model reloading on one pod",
    "payments-service": "1% of authorisations slow at the acquirer",
    "dispatch-service": "2% of matching rounds slow: zone BER-4 re-sharding",
    "notify-service": "3% of sends slow: SMS provider latency",
    "menu-service": "2% of menus slow: availability sync lagging",
    "search-service": "2% of searches slow: segment merge on restaurants[2]",
    "identity-service": "1.5% of token checks slow: key rotation on one pod",
    "geo-service": "2% of lookups slow while shard geo-7 rebalances",
    "eta-service": "2% of predictions slow: model warm-up on a new pod",
    "promo-service": "1% of evaluations slow: campaign rules reloading",
    "ledger-service": "1% of entries slow during a database checkpoint",
    "fraud-service": "2% of scores slow: feature fetch retries on one pod",
    "push-relay": "3% of pushes slow: APNs throttling one certificate",
}


def retry_edges() -> list[tuple[str, str]]:
    """Every (caller, callee) pair of Python services: each has retry settings."""
    return [(s.name, d) for s in SERVICES if s.code for d in app_deps(s)]


def retry_sites() -> list[tuple[str, str, str, int]]:
    """(caller, callee, setting, bad value): raised retries on every edge, no backoff on some."""
    sites = [(c, d, "retries", [8, 10, 12][i % 3]) for i, (c, d) in enumerate(retry_edges())]
    for c, d in [
        ("orders-api", "pricing-service"),
        ("orders-api", "payments-service"),
        ("payments-service", "fraud-service"),
        ("dispatch-service", "geo-service"),
        ("courier-api", "dispatch-service"),
        ("catalog-api", "search-service"),
        ("edge-gateway", "orders-api"),
        ("eta-service", "geo-service"),
    ]:
        sites.append((c, d, "retry_backoff_ms", 0))
    return sites


def calm_push(caller: str, dep: str, others: list[str], present: set[str]) -> Site:
    """Where a harmless retry push goes: never on the caller or the dependency themselves."""
    if others:
        return {"calm_service": others[0], "calm_key": f"{dep}.retries"}
    service, callee = next(
        (s.name, d)
        for s in SERVICES
        if s.code and s.name not in (caller, dep) and s.name in present
        for d in app_deps(s)
        if d != dep and d in present
    )
    return {"calm_service": service, "calm_key": f"{callee}.retries"}


def retry_site(i: int, caller: str, dep: str, setting: str, bad: int, rng: random.Random) -> Site:
    """The retry-storm site of `caller` retrying `dep` with `setting` pushed to `bad`."""
    cfg = config_of(BY_NAME[caller])
    on, present = shape([caller, dep], rng)
    key = f"{dep}.{setting}"
    good = cfg[key]
    ago = rng.choice([12, 14, 17, 21, 26])
    factor = (
        rng.choice([4.2, 5.6, 6.8, 7.5, 9.1])
        if setting == "retries"
        else rng.choice([2.4, 2.6, 2.9])
    )
    attempts = (bad + 1) if setting == "retries" else int(str(cfg[f"{dep}.retries"])) + 1
    backoff = cfg[f"{dep}.retry_backoff_ms"] if setting == "retries" else 0
    share = rng.randint(72, 91)
    if setting == "retries":
        cond = {"above": 3}
        caller_warn = [
            f"retrying {OPS.get(dep, 'call')} on {dep}: attempt {attempts} of {attempts}"
            f" after timeout ({key}={bad}, backoff {backoff} ms)",
        ]
        why = (
            f"{caller}'s {key} was pushed from {good} to {bad}: every failing call to {dep}"
            f" is sent up to {attempts} times"
        )
    else:
        cond = {"below": 50}
        caller_warn = [
            f"retrying {OPS.get(dep, 'call')} on {dep} at once: attempt {attempts} of {attempts}"
            f" ({key}=0, no backoff, all replicas in lockstep)",
        ]
        why = (
            f"{caller}'s {key} was pushed from {good} to 0: every failing call to {dep} is"
            " retried at once, from every replica at the same moment"
        )
    caller_error = [
        f"{OPS.get(dep, 'call')} to {dep} failed after {attempts} attempts; answering 503",
    ]
    dep_warn = [
        f"retry storm: inbound request rate {factor}x normal, {share}% of requests are"
        f" retries (x-retry-attempt >= 1), most from {caller}",
        f"{BLIPS[dep]}; retried requests pile up behind it",
    ]
    dep_error = [
        f"shedding requests: {rng.randint(18, 35)}% answered 503 at {factor}x the usual rate"
    ]
    effects = {
        dep: {"cpu": 0.48, "p99_ms": 1900.0, "error_rate": 0.27, "queue_depth": 160.0},
        caller: {"error_rate": 0.33, "p99_ms": 2600.0},
    }
    for c, e in symptom_effects(caller, present, 0.3, 2200).items():
        effects.setdefault(c, e)
    # The dependency's other callers see its 503s too, without retrying them into a storm.
    others = [c for c in callers_of(dep, present) if c != caller and c not in effects]
    for c in others:
        effects[c] = {"error_rate": 0.09, "p99_ms": 700.0}
    alerts = [
        *gateway_alert(caller),
        {
            "service": dep,
            "metric": "cpu",
            "above": 0.75,
            "severity": "P1",
            "summary": f"{dep} CPU above 75%",
        },
        {
            "service": dep,
            "metric": "error_rate",
            "above": 0.1,
            "severity": "P1",
            "summary": f"{dep} 5xx rate above 10%",
        },
        {
            "service": caller,
            "metric": "error_rate",
            "above": 0.1,
            "severity": "P2",
            "summary": f"{caller} error rate above 10%",
        },
    ]
    knob = f"config:{key}"
    checks = [
        {
            "name": f"{caller} {key} back in the runbook's range",
            "kind": "knob_ok",
            "service": caller,
            "knob": knob,
            **cond,
        },
        {"name": f"{dep} healthy", "kind": "healthy", "service": dep},
        {"name": f"{caller} healthy", "kind": "healthy", "service": caller},
    ]
    return {
        "key_": f"{caller}->{dep}/{setting}",
        "on": on,
        "service": caller,
        "team": BY_NAME[caller].team,
        "dependency": dep,
        "config_key": key,
        "setting": setting,
        "bad": bad,
        "good": good,
        "ago": ago,
        "factor": factor,
        "params": {"knob": knob, **cond},
        "state_checks": checks,
        "effects": effects,
        "caller_warn": caller_warn,
        "caller_error": caller_error,
        "dep_warn": dep_warn,
        "dep_error": dep_error,
        **symptom_logs(
            caller, present, ["upstream {root} answered 503 to 27% of calls in the last minute"]
        ),
        "alerts": alerts,
        "symptoms": [dep, *symptoms_of(caller, present), *others],
        # A harmless retry push elsewhere (3 retries: within the runbook): on the dependency's
        # other caller if it has one, else on another service toward another callee.
        **calm_push(caller, dep, others, present),
        "o1": others[0] if others else "",
        "o1_lines": [f"upstream {dep} answered 503 to 9% of calls in the last minute"]
        if others
        else [],
        "blip": BLIPS[dep],
        "why": why,
        "scale_to": BY_NAME[dep].replicas * 3,
        "dep_version": _bump(BY_NAME[dep].version),
        "difficulty": "hard" if setting == "retry_backoff_ms" else ["medium", "hard"][i % 2],
    }


def _bump(version: str) -> str:
    """The next patch release of `version` (v1.2.3 -> v1.2.4)."""
    major, minor, patch = version.lstrip("v").split(".")
    return f"v{major}.{minor}.{int(patch) + 1}"


# -- disk-full --------------------------------------------------------------------------------


def disk_site(i: int, service: str, rng: random.Random) -> Site:
    """The disk-full site of `service`."""
    svc = BY_NAME[service]
    on, present = shape([service], rng)
    base = svc.disk
    # DEBUG was pushed long enough ago that the disk reached 100%.
    ago = int(100 - base) + rng.choice([6, 9, 12, 15])
    onset = ago - int(90 - base)
    gb = rng.choice([38, 44, 51, 57])
    warn = [
        f"disk 100% used on /var: {gb} GB of logs written in the last {ago} min at log_level=DEBUG",
        f"log rotation failed: no room to compress {service}.log.1",
    ]
    error = [
        f"write failed: No space left on device ({svc.disk_write})",
        "disk full: rejecting writes until space is freed",
    ]
    effects = {
        service: {"error_rate": 0.4, "p99_ms": 600.0},
        **symptom_effects(service, present, 0.4, 800),
    }
    alerts = [
        *gateway_alert(service),
        {
            "service": service,
            "metric": "error_rate",
            "above": 0.1,
            "severity": "P2",
            "summary": f"{service} error rate above 10%",
        },
    ]
    others = [c for c in ("dispatch-service", "accounts-api", "payments-service") if c != service]
    return {
        "key_": service,
        "on": on,
        "service": service,
        "team": svc.team,
        "ago": ago,
        "onset": onset,
        "params": {"knob": "disk", "above": 90},
        "effects": effects,
        "warn": warn,
        "error": error,
        **symptom_logs(
            service,
            present,
            ["upstream {root} answered 5xx to 33% of calls in the last minute"],
            store_text=("{root} rejected 33% of writes in the last minute; answering 503",),
        ),
        "alerts": alerts,
        "symptoms": symptoms_of(service, present),
        "writes": svc.disk_write,
        "other": others[i % len(others)],
        "other_disk": int(BY_NAME[others[i % len(others)]].disk + 24),
        "difficulty": "medium" if svc.code else "hard",
    }


# -- writing ----------------------------------------------------------------------------------


def axis(name: str, tables: list[Site]) -> str:
    """The `[[variants.<name>]]` tables, each keyed by its `key_`."""
    out = []
    for t in tables:
        t = dict(t)
        key = t.pop("key_")
        out.append(toml_table(f"[[variants.{name}]]", {"key": key, **t}, BARE_DASHED_KEYS))
    return "\n".join(out)


def family_sites(family: str) -> list[Site]:
    """The `site` tables of `family` (bad_config_push, retry_storm or disk_full)."""
    rng = random.Random(f"courier-{family}")
    if family == "bad_config_push":
        return [config_site(i, *site, rng) for i, site in enumerate(CONFIG_SITES)]
    if family == "retry_storm":
        return [retry_site(i, *site, rng) for i, site in enumerate(retry_sites())]
    if family == "disk_full":
        return [disk_site(i, s.name, rng) for i, s in enumerate(SERVICES)]
    raise ValueError(f"no courier family {family!r}; they are {', '.join(FAMILIES)}")


FAMILIES = ("bad_config_push", "retry_storm", "disk_full")


def family_axes(family: str) -> str:
    """The axes of `family`'s scenario.toml: its `site` tables, from the platform's data."""
    sites = family_sites(family)
    keys = [s["key_"] for s in sites]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{family}: site keys must be unique: {keys}")
    return axis("site", sites)
