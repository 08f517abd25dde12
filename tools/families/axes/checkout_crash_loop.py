"""Writes the `[[variants.fault]]` tables of scenario.toml (everything below its GENERATED line).

One table per crash-looping site of the shop. Two kinds of crash loop, told apart only by
reading the pod's last words:

- stale pod state (fault kind `crash_loop`): something the pod keeps in its emptyDir across
  container restarts went stale during a network partition (a cached mongo-db primary, redis
  master or postgres primary that failed over, a worker lock left by a killed container, a
  local snapshot torn mid-write). Every container restart reads it again and exits; a rollout
  restart (new pods, empty emptyDir) clears it. Rolling back changes nothing.
- a release that cannot start (fault kind `deployment`): a missing secret, a renamed
  entrypoint, a settings key the new code requires, a start-up migration that fails. A restart
  runs the same release; roll it back.

Four services that the shop does not always run (cart, search, shipping, recommendation) join
the topology per table: the root when it is one of them, and a rotating share of the others.
The tables are data; this file spells out the repetitive parts once. Run it after editing
SITES:

    python -m tools.families regenerate checkout_crash_loop
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

from ..authoring import (
    BARE_DASHED_KEYS,
    SCENARIOS,
    Effects,
    LogBlock,
    deployed_check,
    fault_axis,
    healthy_check,
    log,
    prose_list,
    wrong_fix,
)
from ..shop import release_fields

HERE = SCENARIOS / "checkout_crash_loop"

# name: (code dir, release at the topology's tip (or of the extra services), replicas, emptyDir)
SHOP = {
    "api-gateway": ("api_gateway", "v1.12.0", 4, "/var/cache/gateway"),
    "auth-service": ("auth_service", "v3.2.0", 3, "/var/run/auth"),
    "user-service": ("user_service", "v1.10.0", 3, "/var/run/users"),
    "notification-service": ("notification_service", "v0.8.1", 2, "/var/run/notify"),
    "checkout-service": ("checkout_service", "v1.4.0", 3, "/var/run/checkout"),
    "order-service": ("order_service", "v2.1.0", 3, "/var/run/orders"),
    "inventory-service": ("inventory_service", "v1.4.1", 3, "/var/run/inventory"),
    "payment-service": ("payment_service", "v2.3.1", 3, "/var/run/payments"),
    "cart-service": (None, "v0.6.2", 3, "/var/run/cart"),
    "search-service": (None, "v2.0.4", 3, "/var/lib/search"),
    "shipping-service": (None, "v1.1.3", 2, "/var/run/shipping"),
    "recommendation-service": (None, "v0.4.1", 2, "/var/cache/recs"),
}
EXTRAS = ("cart-service", "search-service", "shipping-service", "recommendation-service")

EDGE = {
    "api-gateway": ("Shop API failing at the edge", "api-gateway answers 5xx on every route"),
    "auth-service": ("Logins and authenticated calls failing", "authenticated routes answer 503"),
    "user-service": ("Profile pages failing", "GET /v1/users/* answers 502 at the edge"),
    "notification-service": (
        "Order confirmation e-mails not going out",
        "customers report missing order confirmations",
    ),
    "checkout-service": ("Checkout failing", "POST /v1/checkout answers 502 at the edge"),
    "order-service": ("Checkout failing", "POST /v1/checkout answers 503 at the edge"),
    "inventory-service": ("Checkout failing", "POST /v1/checkout answers 503 at the edge"),
    "payment-service": (
        "Payments failing at the edge",
        "POST /v1/payments/charge answers 502 at the edge",
    ),
    "cart-service": ("Carts not loading", "GET /v1/cart answers 502 at the edge"),
    "search-service": ("Search failing", "GET /v1/search answers 502 at the edge"),
    "shipping-service": ("Checkout failing", "POST /v1/checkout answers 503 at the edge"),
    "recommendation-service": (
        "Home page recommendations missing",
        "GET /v1/recommendations answers 502 at the edge",
    ),
}

ROUTES = {
    "user-service": "GET /v1/users/u-4821",
    "checkout-service": "POST /v1/checkout",
    "payment-service": "POST /v1/payments/charge",
    "cart-service": "GET /v1/cart",
    "search-service": "GET /v1/search?q=lamp",
    "recommendation-service": "GET /v1/recommendations",
}


class Mechanism(TypedDict):
    """The evidence and cause one crash-loop mechanism leaves on its service."""

    logs: list[LogBlock]
    terminal: list[str]
    cause: str
    store: NotRequired[str | None]
    """The datastore that failed over (stale pod state only), the plausible wrong suspect."""
    change: NotRequired[str]
    """What the bad release changed (a release that cannot start only)."""


def symptoms(root: str) -> tuple[Effects, list[LogBlock], list[str]]:
    """Effects, log blocks and symptom services upstream of `root` having no ready pod."""
    effects: Effects = {}
    logs: list[LogBlock] = []

    def add(service: str, level: str, lines: list[str], **effect: float) -> None:
        effects[service] = effect
        logs.append(log(service, level, *lines))

    gone = "no healthy endpoints"
    edge = "upstream checkout-service answered 503 for POST /v1/checkout; passing it on"
    if root == "auth-service":
        add(
            "api-gateway",
            "ERROR",
            [
                f"auth-service {gone} verifying bearer tokens for POST /v1/checkout; answering 503",
            ],
            error_rate=0.42,
            p99_ms=60,
        )
        add(
            "user-service",
            "WARN",
            [
                f"auth-service {gone} for the session check of GET /v1/users/u-4821; answering 503",
            ],
            error_rate=0.3,
        )
    elif root in ROUTES:
        add(
            "api-gateway",
            "ERROR",
            [
                f"upstream {root} {gone} for {ROUTES[root]}; answering 502",
            ],
            error_rate=0.06 if root == "recommendation-service" else 0.2,
            p99_ms=40,
        )
    elif root == "order-service":
        add(
            "checkout-service",
            "ERROR",
            [
                f"order-service {gone} placing order ord-7b21e08c5a94; answering 503"
                " order_unavailable",
            ],
            error_rate=0.6,
        )
        add("api-gateway", "WARN", [edge], error_rate=0.13)
    elif root in ("inventory-service", "shipping-service"):
        what = "reservation" if root == "inventory-service" else "shipping quote"
        add(
            "order-service",
            "ERROR",
            [
                f"{what} for ord-0f3a9c41d2e7 failed: {root} {gone}",
            ],
            error_rate=0.55,
        )
        add(
            "checkout-service",
            "WARN",
            [
                "order-service answered 503 for ord-0f3a9c41d2e7; answering 503 order_unavailable",
            ],
            error_rate=0.5,
        )
        add("api-gateway", "WARN", [edge], error_rate=0.13)
    elif root == "notification-service":
        add(
            "checkout-service",
            "WARN",
            [
                f"notification-service {gone}: confirmation e-mail for ord-5c2e9a07f13b left in the"
                " outbox for a later attempt",
            ],
            error_rate=0.004,
            queue_depth=30,
        )
    return effects, logs, list(effects)


def backoff(s: str, pod: str, replicas: int, code: int, extra: str = "") -> LogBlock:
    """The kubelet's CrashLoopBackOff and readiness lines for `s`."""
    return log(
        s,
        "WARN",
        f"Back-off restarting failed container {s} in pod {s}-{pod} (CrashLoopBackOff, exit"
        f" code {code}, back-off 5m0s{extra})",
        f"readiness probe failed: 0/{replicas} pods of {s} ready",
    )


# -- stale pod state: restart --------------------------------------------------------------


def stale_mongo(s: str, pod: str, r: int, ed: str, stale: str, primary: str) -> Mechanism:
    """A mongo-db primary cached in the emptyDir that lost an election."""
    hint = f"{ed}/primary-hint"
    return Mechanism(
        logs=[
            log(
                s,
                "FATAL",
                f"mongo-db-{stale}.mongo-db:27017 is not the rs0 primary (via"
                f" mongodb://mongo-db-{stale}.mongo-db:27017/?directConnection=true, cached in"
                f" {hint}); exiting",
            ),
            backoff(s, pod, r, 1),
            log(
                "mongo-db",
                "INFO",
                f"rs0 status: primary mongo-db-{primary}, 3/3 members healthy; mongo-db-{stale}"
                " back in SECONDARY since the network partition healed (election term 44)",
            ),
        ],
        terminal=[
            "netops: zone b connectivity restored after 6 minutes; rs0 elected"
            f" mongo-db-{primary} while mongo-db-{stale} was cut off"
        ],
        cause=(
            f"during the network partition mongo-db-{primary} replaced mongo-db-{stale} as"
            f" rs0 primary; {s} caches the primary in its pods' emptyDir ({hint}) and a"
            " restarted container connects straight to it (the direct-primary commit), finds"
            " a secondary and exits 1, so the pods crash-loop. mongo-db is healthy"
        ),
        store="mongo-db",
    )


def stale_redis(s: str, pod: str, r: int, ed: str) -> Mechanism:
    """A redis sentinel master cached in the emptyDir that is now a replica."""
    cached = f"{ed}/redis-master"
    return Mechanism(
        logs=[
            log(
                s,
                "FATAL",
                f"the cached sentinel master redis-cache-1:6379 ({cached}) refuses writes:"
                " READONLY You can't write against a read only replica.; exiting",
            ),
            backoff(s, pod, r, 1),
            log(
                "redis-cache",
                "INFO",
                "+switch-master shop-cache redis-cache-1 6379 redis-cache-0 6379 (sentinel"
                " quorum 2/3 after the network partition)",
            ),
        ],
        terminal=[
            "netops: zone b connectivity restored after 6 minutes; sentinel promoted"
            " redis-cache-0 while redis-cache-1 was cut off"
        ],
        cause=(
            f"during the network partition sentinel promoted redis-cache-0; {s} keeps the"
            f" master it found at start in its pods' emptyDir ({cached}), so every restarted"
            " container writes to the old master, now a replica, gets READONLY and exits 1:"
            " the pods crash-loop. redis-cache is healthy"
        ),
        store="redis-cache",
    )


def stale_postgres(s: str, pod: str, r: int, ed: str) -> Mechanism:
    """A postgres primary cached in the emptyDir that is now a read-only standby."""
    cached = f"{ed}/pg-primary"
    return Mechanism(
        logs=[
            log(
                s,
                "FATAL",
                f"the cached primary postgres-db-0 ({cached}) refuses writes: cannot execute"
                " INSERT in a read-only transaction; stale connection target, exiting",
            ),
            backoff(s, pod, r, 1),
            log(
                "postgres-db",
                "INFO",
                "LOG:  postgres-db-1 promoted to primary (timeline 7); postgres-db-0 following"
                " it as a standby since the network partition healed",
            ),
        ],
        terminal=[
            "netops: zone b connectivity restored after 6 minutes; postgres-db-1 was"
            " promoted while postgres-db-0 was cut off"
        ],
        cause=(
            f"during the network partition postgres-db-1 was promoted; {s} caches the"
            f" primary's host in its pods' emptyDir ({cached}) and every restarted"
            " container reconnects to postgres-db-0, now a read-only standby, and exits 1:"
            " the pods crash-loop. postgres-db is healthy"
        ),
        store="postgres-db",
    )


def stale_lock(s: str, pod: str, r: int, ed: str, worker: str) -> Mechanism:
    """A worker lock in the emptyDir left behind by a killed container."""
    lock = f"{ed}/{worker}.lock"
    return Mechanism(
        logs=[
            log(
                s,
                "FATAL",
                f"{worker} lock {lock} is held by pid 7; refusing to run a second worker, exiting",
            ),
            backoff(s, pod, r, 3),
        ],
        terminal=[
            "netops: node shop-node-7 lost its network for 4 minutes during the"
            " partition in zone b; the kubelet killed containers mid-request"
        ],
        cause=(
            f"when the network partition cut off its node, the {s} containers were killed"
            f" while holding the {worker} lock, a file in the pods' emptyDir ({lock}); every"
            " restarted container finds the lock held by a dead pid, refuses to start a"
            " second worker and exits 3: the pods crash-loop"
        ),
        store=None,
    )


def stale_snapshot(s: str, pod: str, r: int, ed: str, snapshot: str) -> Mechanism:
    """A local snapshot in the emptyDir torn mid-write."""
    path = f"{ed}/{snapshot}"
    return Mechanism(
        logs=[
            log(
                s,
                "FATAL",
                f"local snapshot {path} is torn (checksum mismatch); exiting rather than"
                " serving from it",
            ),
            backoff(s, pod, r, 1),
        ],
        terminal=[
            "netops: node shop-node-4 lost its network for 3 minutes during the partition in zone b"
        ],
        cause=(
            f"the network partition cut off the node while {s} was writing its local"
            f" snapshot ({path}, in the pods' emptyDir); every restarted container finds it"
            " torn and exits 1: the pods crash-loop. New pods rebuild it from scratch"
        ),
        store=None,
    )


# -- a release that cannot start: roll back -------------------------------------------------


def bad_secret(s: str, pod: str, r: int, ed: str, secret: str, why: str) -> Mechanism:
    """A release that mounts a secret nobody created."""
    return Mechanism(
        logs=[
            log(
                s,
                "ERROR",
                f"container {s} failed to start: CreateContainerConfigError: secret"
                f' "{secret}" not found ({{bad}} mounts it for {why})',
            ),
            backoff(s, pod, r, 1),
        ],
        terminal=[],
        cause=(
            f"{s} {{bad}} mounts the secret {secret} for {why}; nobody created it in the"
            " cluster, so no container of the release can start"
        ),
        change=f"mount {secret} for {why}",
    )


def bad_entrypoint(s: str, pod: str, r: int, ed: str, command: str, why: str) -> Mechanism:
    """A release whose entrypoint its image does not ship."""
    return Mechanism(
        logs=[
            log(
                s,
                "ERROR",
                f'container {s} failed to start: exec: "{command}": executable file not found'
                f" in $PATH ({{bad}} changed the entrypoint; the image does not ship it)",
            ),
            backoff(s, pod, r, 127),
        ],
        terminal=[],
        cause=(
            f"{s} {{bad}} starts its pods with {command}, which its image does not contain,"
            " so every container exits 127 at start"
        ),
        change=f"start with {command} ({why})",
    )


def bad_setting(s: str, pod: str, r: int, ed: str, key: str, why: str) -> Mechanism:
    """A release that requires a settings key the ConfigMap lacks."""
    return Mechanism(
        logs=[
            log(
                s,
                "FATAL",
                f"{s} {{bad}} failed to start: settings key '{key}' does not exist in"
                " /etc/shop/settings.toml (the ConfigMap was not updated with the release)",
            ),
            backoff(s, pod, r, 78),
        ],
        terminal=[],
        cause=(
            f"{s} {{bad}} requires the settings key {key} ({why}); the ConfigMap was not"
            " updated, so every container exits 78 at start"
        ),
        change=f"{why} (new settings key {key})",
    )


def bad_migration(
    s: str, pod: str, r: int, ed: str, migration: str, missing: str, error: str, why: str
) -> Mechanism:
    """A release whose start-up migration references what no migration creates."""
    return Mechanism(
        logs=[
            log(
                s,
                "FATAL",
                f"migration {migration} failed: {missing} does not exist; refusing to start",
                f"psycopg.errors.{error}: {missing} does not exist",
            ),
            backoff(s, pod, r, 1),
        ],
        terminal=[],
        cause=(
            f"{s} {{bad}} runs migration {migration} at start, which references {missing}"
            " that no migration creates; every pod fails it and crash-loops"
        ),
        change=f"{why} (migration {migration})",
    )


# The start-up modules (history/12-17) that keep a pod's discovery in its emptyDir: each
# exists only in the seeds where it is what went stale.
MODULES = {
    "auth": ("auth-service", "redis"),
    "notification": ("notification-service", "redis"),
    "user": ("user-service", "postgres"),
    "payment": ("payment-service", "postgres"),
    "checkout": ("checkout-service", "lock"),
    "gateway": ("api-gateway", "snapshot"),
}

STALE: dict[str, Callable[..., Mechanism]] = {
    "mongo": stale_mongo,
    "redis": stale_redis,
    "postgres": stale_postgres,
    "lock": stale_lock,
    "snapshot": stale_snapshot,
}
RELEASE: dict[str, Callable[..., Mechanism]] = {
    "secret": bad_secret,
    "entrypoint": bad_entrypoint,
    "setting": bad_setting,
    "migration": bad_migration,
}

# (service, mechanism, fields); release mechanisms also give good, bad and author.
SITES: list[tuple[str, str, dict[str, str]]] = [
    ("inventory-service", "mongo", dict(stale="2", primary="0")),
    ("order-service", "mongo", dict(stale="1", primary="0")),
    ("auth-service", "redis", {}),
    ("notification-service", "redis", {}),
    ("user-service", "postgres", {}),
    ("payment-service", "postgres", {}),
    ("checkout-service", "lock", dict(worker="order-drain")),
    ("api-gateway", "snapshot", dict(snapshot="routes.snapshot")),
    ("cart-service", "redis", {}),
    ("search-service", "snapshot", dict(snapshot="index/shard-0.seg")),
    ("shipping-service", "postgres", {}),
    ("recommendation-service", "lock", dict(worker="model-refresh")),
    (
        "payment-service",
        "migration",
        dict(
            migration="0005_dedupe_retried_charges",
            missing='column "idempotency_key"',
            error="UndefinedColumn",
            why="dedupe retried charges",
            good="v2.4.1",
            bad="v2.4.2",
            author="jonas@payments-team",
        ),
    ),
    (
        "user-service",
        "setting",
        dict(
            key="profiles.avatar_bucket",
            why="serve avatars from the new bucket",
            good="v1.10.1",
            bad="v1.11.0",
            author="rosa@accounts-team",
        ),
    ),
    (
        "inventory-service",
        "entrypoint",
        dict(
            command="inventory-serve",
            why="a console script instead of python -m",
            good="v1.4.2",
            bad="v1.5.0",
            author="dmitri@commerce-team",
        ),
    ),
    (
        "order-service",
        "secret",
        dict(
            secret="orders-events-credentials",
            why="publishing order events",
            good="v2.1.1",
            bad="v2.2.0",
            author="kofi@commerce-team",
        ),
    ),
    (
        "checkout-service",
        "setting",
        dict(
            key="checkout.gift_cards.provider_url",
            why="gift card line items",
            good="v1.4.1",
            bad="v1.5.0",
            author="tomas@commerce-team",
        ),
    ),
    (
        "auth-service",
        "entrypoint",
        dict(
            command="auth-gunicorn",
            why="gunicorn workers",
            good="v3.2.1",
            bad="v3.3.0",
            author="nadia@identity-team",
        ),
    ),
    (
        "notification-service",
        "secret",
        dict(
            secret="notify-sms-provider",
            why="SMS notifications",
            good="v0.8.2",
            bad="v0.9.0",
            author="yuki@comms-team",
        ),
    ),
    (
        "api-gateway",
        "setting",
        dict(
            key="edge.rate_limit.redis_url",
            why="per-client rate limits",
            good="v1.12.1",
            bad="v1.13.0",
            author="ines@edge-team",
        ),
    ),
    (
        "cart-service",
        "entrypoint",
        dict(
            command="cart-uvicorn",
            why="uvicorn workers",
            good="v0.6.3",
            bad="v0.7.0",
            author="lea@commerce-team",
        ),
    ),
    (
        "search-service",
        "secret",
        dict(
            secret="search-synonyms-bucket",
            why="synonym lists from object storage",
            good="v2.0.5",
            bad="v2.1.0",
            author="noor@discovery-team",
        ),
    ),
    (
        "shipping-service",
        "migration",
        dict(
            migration="0007_carrier_codes",
            missing='relation "carriers"',
            error="UndefinedTable",
            why="carrier codes on shipments",
            good="v1.1.4",
            bad="v1.2.0",
            author="ravi@logistics-team",
        ),
    ),
    (
        "recommendation-service",
        "setting",
        dict(
            key="recs.model.version",
            why="pin the ranking model",
            good="v0.4.2",
            bad="v0.5.0",
            author="noor@discovery-team",
        ),
    ),
]

PODS = [
    "5c9d7f8b6-g7lqx",
    "7b8c6d9f5-n3vzw",
    "6d7f9b8c5-j5tkr",
    "8f6c7b9d5-w2mhp",
    "9b5d8c7f6-q4xnz",
]

# An innocent release shortly before the page, on a service that is neither the root nor on
# its path: (service, new version).
HERRINGS = {
    "api-gateway": ("notification-service", "v0.8.2"),
    "auth-service": ("payment-service", "v2.3.2"),
    "user-service": ("inventory-service", "v1.4.2"),
    "notification-service": ("user-service", "v1.10.1"),
    "checkout-service": ("user-service", "v1.10.1"),
    "order-service": ("payment-service", "v2.3.2"),
    "inventory-service": ("notification-service", "v0.8.2"),
    "payment-service": ("inventory-service", "v1.4.2"),
    "cart-service": ("order-service", "v2.1.1"),
    "search-service": ("payment-service", "v2.3.2"),
    "shipping-service": ("user-service", "v1.10.1"),
    "recommendation-service": ("checkout-service", "v1.4.1"),
}


DEEP = ("notification-service", "order-service", "inventory-service", "shipping-service")
"""Roots two or more hops from the page: the alert names a caller first."""


def difficulty(service: str, stale: bool) -> str:
    """The table's difficulty: medium, or hard for a stale root two hops from the page.

    Medium: a CrashLoopBackOff whose last words tell restart from rollback. Hard: the same,
    two hops from the page, with the datastore that failed over or an innocent release in
    plain sight.
    """
    return "hard" if stale and service in DEEP else "medium"


def table(index: int, site: tuple[str, str, dict[str, str]]) -> dict[str, Any]:
    """The `[[variants.fault]]` table of the `index`-th site (its fields dict is consumed)."""
    service, mech, fields = site
    code_dir, tip, replicas, emptydir = SHOP[service]
    pod = PODS[index % len(PODS)]
    release = {k: fields.pop(k) for k in ("good", "bad", "author") if k in fields}
    stale = mech in STALE
    m = (STALE if stale else RELEASE)[mech](service, pod, replicas, emptydir, **fields)
    bad = release.get("bad", "")

    def fill(text: str) -> str:
        return text.replace("{bad}", bad)

    for block in m["logs"]:
        block["lines"] = [fill(line) for line in block["lines"]]
    effects, logs, chain = symptoms(service)
    effects = {service: {"error_rate": 1.0}, **effects}
    herring, herring_version = HERRINGS[service]
    if stale:
        fix = {"tool": "restart_service", "args": {"service": service}}
        truth = {
            "location": f"service:{service}",
            "category": "crash_loop",
            "remediation": "restart_service",
        }
        checks: list[dict[str, str]] = []
        done = f"Restarted {service}: new pods start with an empty emptyDir"
        if m["store"]:
            wrong_service, wrong_tool, wrong_cat = m["store"], "restart_service", "crash_loop"
        else:
            wrong_service, wrong_tool, wrong_cat = herring, "rollback_deployment", "bad_deployment"
    else:
        fix = {
            "tool": "rollback_deployment",
            "args": {"service": service, "to_version": release["good"]},
        }
        truth = {
            "location": f"deployment:{service}@{bad}",
            "category": "bad_deployment",
            "remediation": "rollback_deployment",
        }
        checks = [deployed_check(service, release["good"])]
        done = f"Rolled {service} back to {release['good']}"
        wrong_service, wrong_tool, wrong_cat = service, "restart_service", "crash_loop"
    checks.append(healthy_check(service))
    if "api-gateway" in chain:
        checks.append(healthy_check("api-gateway"))
    wrong = wrong_fix(
        wrong_tool,
        {"service": wrong_service},
        wrong_service,
        wrong_cat,
        f"{wrong_service} looked guilty; {wrong_tool.replace('_', ' ')} done.",
    )
    # Extra services: the root always; of the others, a rotating pair.
    present = {x: x == service or (index + i) % 4 < 2 for i, x in enumerate(EXTRAS)}
    p2p = [
        "hidden/probes.py::inventory_refuses_to_serve_without_a_primary",
        "hidden/probes.py::inventory_serves_once_it_finds_the_primary",
        "hidden/probes.py::orders_refuse_to_serve_without_a_primary",
        "hidden/probes.py::orders_serve_once_they_find_the_primary",
        "hidden/probes.py::checkout_gives_up_within_its_budget",
        "hidden/probes.py::order_reserves_stock_through_inventory",
    ]
    if not (mech == "mongo" and service == "inventory-service"):
        p2p.append("hidden/probes.py::inventory_rediscovers_the_primary_after_an_election")
    if not (mech == "mongo" and service == "order-service"):
        p2p.append("hidden/probes.py::orders_rediscover_the_primary_after_an_election")
    return {
        "key": f"{service.removesuffix('-service')}-{mech}",
        "service": service,
        "code_dir": code_dir or "",
        "mechanism": mech,
        "difficulty": difficulty(service, stale),
        "kind": "crash_loop" if stale else "deployment",
        "params": {} if stale else {"bad_version": bad},
        "release": not stale,
        "good": release.get("good", ""),
        "bad": bad,
        "author": release.get("author", ""),
        **release_fields(service, tip, release.get("good"), bad),
        "code_release": bool(code_dir) and not stale,
        "change": m.get("change", ""),
        **{f"module_{name}": (service, mech) == site for name, site in MODULES.items()},
        "inv_direct": mech == "mongo" and service == "inventory-service",
        "ord_direct": mech == "mongo" and service == "order-service",
        "with_cart": present["cart-service"],
        "with_search": present["search-service"],
        "with_shipping": present["shipping-service"],
        "with_recs": present["recommendation-service"],
        "herring": herring,
        "herring_version": herring_version,
        "title": EDGE[service][0],
        "page": EDGE[service][1],
        "effects": effects,
        "logs": m["logs"] + logs,
        "terminal": [{"text": t} for t in m["terminal"]],
        "gateway_alert": service != "api-gateway",
        "symptoms": chain,
        "callers": prose_list(chain, "the customers, directly"),
        "truth": truth,
        "cause": fill(m["cause"][0].upper() + m["cause"][1:]),
        "fix_tool": fix["tool"],
        "fix_args": fix["args"],
        "done": done,
        "state_checks": checks,
        "pass_to_pass": p2p,
        "wrong": wrong,
        "wrong_service": wrong_service,
    }


def axes() -> str:
    """The main axis, from SITES."""
    tables = [table(index, (*site[:-1], dict(site[-1]))) for index, site in enumerate(SITES)]
    return fault_axis(tables, BARE_DASHED_KEYS)
