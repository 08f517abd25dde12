"""The courier platform as data: services, dependencies, runtime config and routine logs.

Read by topologies/courier.py (topology.toml and the platform's healthy history) and
courier.py (the variant tables of the families on it: bad_config_push, retry_storm, disk_full).
The engine never imports it: it reads what they write.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DOMAIN = "courier.svc.cluster.local"


@dataclass
class Service:
    """One service of the platform."""

    name: str
    core: bool
    """Present in every seed's platform; the others come and go with the seed's shape."""
    deps: list[str]
    replicas: int
    baseline: dict[str, float]
    logs: list[str]
    code: bool = True
    """A Python service with a package in the tree (infrastructure has none)."""
    version: str = "v1.0.0"
    extra_config: dict[str, object] = field(default_factory=dict)
    disk: float = 40.0
    what: str = ""
    """One line: what it does (settings.py docstring, README)."""
    disk_write: str = ""
    """What fails to be written when its disk is full (a path and an operation)."""

    @property
    def ident(self) -> str:
        """Its name as a Python identifier: its package, and its key in `on` tables."""
        return self.name.replace("-", "_")

    @property
    def team(self) -> str:
        """The team that owns it (and pushes its config)."""
        return TEAMS.get(self.name, self.name.split("-")[0] + "-team")


def _b(cpu: float, mem: float, err: float, p99: float, q: float) -> dict[str, float]:
    return {"cpu": cpu, "memory": mem, "error_rate": err, "p99_ms": p99, "queue_depth": q}


SERVICES: list[Service] = [
    Service(
        "edge-gateway",
        True,
        ["orders-api", "catalog-api", "accounts-api", "courier-api", "ratings-service"],
        4,
        _b(0.36, 0.41, 0.002, 190, 6),
        [
            "INFO served {n} requests in the last minute",
            "INFO POST /v1/orders 201 {ms} ms",
            "DEBUG upstream keep-alive reuse ratio {ratio}",
        ],
        version="v4.2.0",
        extra_config={"ratelimit.rps": 9000},
        what="public HTTPS edge: auth check, routing, rate limiting",
        disk=35.0,
        disk_write="access log /var/log/edge/access.log",
    ),
    Service(
        "orders-api",
        True,
        ["pricing-service", "payments-service", "dispatch-service", "notify-service", "orders-db"],
        4,
        _b(0.33, 0.47, 0.002, 260, 5),
        [
            "INFO placed {n} orders in the last minute",
            "INFO order total priced in {ms} ms",
            "DEBUG orders-db pool usage ratio {ratio}",
        ],
        version="v7.3.1",
        extra_config={"db.pool_size": 48, "db.statement_timeout_ms": 5000, "region": "eu-west-1"},
        what="order placement: price, charge, dispatch, confirm",
        disk=42.0,
        disk_write="order audit journal /var/lib/orders/audit",
    ),
    Service(
        "accounts-api",
        True,
        ["identity-service", "session-cache"],
        3,
        _b(0.28, 0.39, 0.001, 120, 3),
        [
            "INFO served {n} account reads in the last minute",
            "INFO session lookup {ms} ms",
            "DEBUG profile cache hit ratio {ratio}",
        ],
        version="v2.8.0",
        what="customer accounts, addresses and sessions",
        disk=38.0,
        disk_write="session audit log /var/log/accounts/sessions.log",
    ),
    Service(
        "payments-service",
        True,
        ["ledger-service", "fraud-service"],
        3,
        _b(0.31, 0.45, 0.002, 340, 4),
        [
            "INFO captured {n} charges in the last minute",
            "INFO acquirer authorisation {ms} ms",
            "DEBUG 3-D Secure frictionless ratio {ratio}",
        ],
        version="v5.1.2",
        extra_config={"region": "eu-west-1"},
        what="card charges and refunds through the acquirer",
        disk=44.0,
        disk_write="settlement batch files /var/lib/payments/batches",
    ),
    Service(
        "dispatch-service",
        True,
        ["geo-service", "eta-service", "event-bus"],
        3,
        _b(0.42, 0.52, 0.002, 210, 7),
        [
            "INFO assigned {n} couriers in the last minute",
            "INFO matching round {ms} ms",
            "DEBUG offer acceptance ratio {ratio}",
        ],
        version="v3.9.0",
        what="matches orders to couriers",
        disk=41.0,
        disk_write="matching snapshots /var/lib/dispatch/snapshots",
    ),
    Service(
        "orders-db",
        True,
        [],
        2,
        _b(0.38, 0.63, 0.0, 14, 2),
        [
            "INFO checkpoint complete: wrote {n} buffers",
            "INFO autovacuum orders.public.orders {ms} ms",
            "DEBUG replication lag 0 bytes, buffer hit ratio {ratio}",
        ],
        code=False,
        version="postgres-15.6",
        what="PostgreSQL for orders and ratings",
        disk=52.0,
        disk_write="WAL segment in /var/lib/postgresql/data/pg_wal",
    ),
    Service(
        "session-cache",
        True,
        [],
        2,
        _b(0.14, 0.42, 0.0, 2, 1),
        ["INFO {n} commands processed in the last minute", "DEBUG keyspace hit ratio {ratio}"],
        code=False,
        version="redis-7.2.4",
        what="Redis for sessions and fraud features",
        disk=30.0,
        disk_write="append-only file /data/appendonly.aof",
    ),
    # -- optional: the seed's shape decides which of these run -------------------------------
    Service(
        "catalog-api",
        False,
        ["menu-service", "search-service"],
        3,
        _b(0.26, 0.37, 0.001, 150, 3),
        [
            "INFO served {n} catalog pages in the last minute",
            "INFO restaurant page {ms} ms",
            "DEBUG page cache hit ratio {ratio}",
        ],
        version="v2.4.0",
        what="restaurant and menu pages",
        disk=36.0,
        disk_write="page render cache /var/cache/catalog",
    ),
    Service(
        "courier-api",
        False,
        ["dispatch-service", "geo-service"],
        3,
        _b(0.30, 0.40, 0.002, 140, 4),
        [
            "INFO received {n} courier location pings in the last minute",
            "INFO offer accepted in {ms} ms",
            "DEBUG ping batching ratio {ratio}",
        ],
        version="v1.12.0",
        what="the courier app's API: pings, offers, hand-offs",
        disk=37.0,
        disk_write="ping spool /var/spool/courier-api",
    ),
    Service(
        "ratings-service",
        False,
        ["orders-db", "event-bus"],
        2,
        _b(0.12, 0.30, 0.001, 90, 2),
        ["INFO stored {n} ratings in the last hour", "INFO rating write {ms} ms"],
        version="v1.3.0",
        extra_config={"db.pool_size": 16},
        what="ratings of restaurants and couriers",
        disk=33.0,
        disk_write="ratings export /var/lib/ratings/export",
    ),
    Service(
        "pricing-service",
        False,
        ["promo-service", "geo-service"],
        3,
        _b(0.34, 0.44, 0.001, 95, 3),
        [
            "INFO priced {n} baskets in the last minute",
            "INFO surge zone lookup {ms} ms",
            "DEBUG quote cache hit ratio {ratio}",
        ],
        version="v6.0.4",
        extra_config={"ratelimit.rps": 5000},
        what="basket quotes: delivery fee, surge, promotions",
        disk=39.0,
        disk_write="quote audit log /var/log/pricing/quotes.log",
    ),
    Service(
        "notify-service",
        False,
        ["push-relay", "event-bus"],
        2,
        _b(0.17, 0.33, 0.003, 230, 20),
        [
            "INFO sent {n} order updates in the last minute",
            "INFO template rendered in {ms} ms",
            "DEBUG outbox drain ratio {ratio}",
        ],
        version="v2.0.1",
        what="order status e-mails, SMS and pushes",
        disk=46.0,
        disk_write="outbox spool /var/spool/notify",
    ),
    Service(
        "menu-service",
        False,
        ["search-index"],
        2,
        _b(0.22, 0.35, 0.001, 70, 2),
        ["INFO served {n} menus in the last minute", "INFO menu publish {ms} ms"],
        version="v3.1.0",
        extra_config={"ratelimit.rps": 2500},
        what="menus and item availability",
        disk=34.0,
        disk_write="menu image thumbnails /var/cache/menu/thumbs",
    ),
    Service(
        "search-service",
        False,
        ["search-index"],
        3,
        _b(0.40, 0.55, 0.001, 110, 4),
        [
            "INFO answered {n} searches in the last minute",
            "INFO query rewrite {ms} ms",
            "DEBUG typo-tolerance hit ratio {ratio}",
        ],
        version="v2.6.3",
        what="restaurant and dish search",
        disk=40.0,
        disk_write="query log /var/log/search/queries.log",
    ),
    Service(
        "identity-service",
        False,
        ["session-cache"],
        3,
        _b(0.37, 0.34, 0.001, 85, 3),
        [
            "INFO verified {n} tokens in the last minute",
            "INFO login ok in {ms} ms",
            "DEBUG revocation cache hit ratio {ratio}",
        ],
        version="v4.0.2",
        extra_config={"ratelimit.rps": 3000},
        what="logins, tokens and revocations",
        disk=35.0,
        disk_write="login audit log /var/log/identity/audit.log",
    ),
    Service(
        "geo-service",
        False,
        [],
        4,
        _b(0.45, 0.58, 0.001, 40, 5),
        [
            "INFO resolved {n} geocodes in the last minute",
            "INFO route graph lookup {ms} ms",
            "DEBUG tile cache hit ratio {ratio}",
        ],
        version="v5.4.0",
        extra_config={"ratelimit.rps": 12000},
        what="geocoding, zones and road-graph distances",
        disk=48.0,
        disk_write="tile cache /var/cache/geo/tiles",
    ),
    Service(
        "eta-service",
        False,
        ["geo-service"],
        3,
        _b(0.39, 0.50, 0.002, 75, 4),
        [
            "INFO predicted {n} ETAs in the last minute",
            "INFO model inference {ms} ms",
            "DEBUG prediction within 2 min ratio {ratio}",
        ],
        version="v2.2.0",
        what="delivery time predictions",
        disk=43.0,
        disk_write="feature snapshots /var/lib/eta/features",
    ),
    Service(
        "promo-service",
        False,
        [],
        2,
        _b(0.15, 0.29, 0.001, 45, 2),
        ["INFO evaluated {n} promo codes in the last minute", "INFO rule set loaded in {ms} ms"],
        version="v1.7.0",
        what="promotion codes and campaign rules",
        disk=31.0,
        disk_write="redemption journal /var/lib/promo/redemptions",
    ),
    Service(
        "ledger-service",
        False,
        ["ledger-db"],
        2,
        _b(0.24, 0.40, 0.001, 60, 2),
        ["INFO posted {n} ledger entries in the last minute", "INFO double-entry commit {ms} ms"],
        version="v3.0.5",
        extra_config={"db.pool_size": 32, "db.statement_timeout_ms": 8000, "region": "eu-west-1"},
        what="double-entry ledger of charges, refunds and payouts",
        disk=45.0,
        disk_write="journal export /var/lib/ledger/export",
    ),
    Service(
        "fraud-service",
        False,
        ["session-cache"],
        2,
        _b(0.29, 0.48, 0.001, 55, 2),
        [
            "INFO scored {n} payments in the last minute",
            "INFO rules and model {ms} ms",
            "DEBUG step-up challenge ratio {ratio}",
        ],
        version="v2.9.1",
        what="payment risk scoring",
        disk=41.0,
        disk_write="decision log /var/log/fraud/decisions.log",
    ),
    Service(
        "push-relay",
        False,
        [],
        2,
        _b(0.11, 0.25, 0.002, 160, 6),
        ["INFO relayed {n} pushes in the last minute", "INFO APNs batch {ms} ms"],
        version="v1.1.0",
        what="push notifications to APNs and FCM",
        disk=32.0,
        disk_write="retry spool /var/spool/push-relay",
    ),
    Service(
        "ledger-db",
        False,
        [],
        2,
        _b(0.30, 0.60, 0.0, 11, 2),
        ["INFO checkpoint complete: wrote {n} buffers", "DEBUG buffer hit ratio {ratio}"],
        code=False,
        version="postgres-15.6",
        what="PostgreSQL for the ledger",
        disk=50.0,
        disk_write="WAL segment in /var/lib/postgresql/data/pg_wal",
    ),
    Service(
        "search-index",
        False,
        [],
        3,
        _b(0.44, 0.68, 0.0, 18, 3),
        [
            "INFO indexed {n} documents in the last minute",
            "INFO merge of 12 segments {ms} ms",
            "DEBUG query cache hit ratio {ratio}",
        ],
        code=False,
        version="opensearch-2.13.0",
        what="OpenSearch for menus and search",
        disk=55.0,
        disk_write="translog of shard restaurants[2]",
    ),
    Service(
        "event-bus",
        False,
        [],
        3,
        _b(0.25, 0.57, 0.0, 6, 3),
        [
            "INFO {n} messages appended in the last minute",
            "INFO log segment rolled in {ms} ms",
            "DEBUG in-sync replica ratio {ratio}",
        ],
        code=False,
        version="kafka-3.7.0",
        what="Kafka for order and courier events",
        disk=50.0,
        disk_write="log segment of order-events-3",
    ),
]

BY_NAME = {s.name: s for s in SERVICES}

TEAMS = {
    "orders-db": "dba-team",
    "ledger-db": "dba-team",
    "session-cache": "platform-team",
    "event-bus": "streaming-team",
    "search-index": "search-team",
    "push-relay": "notify-team",
    "ratings-service": "growth-team",
    "promo-service": "growth-team",
    "eta-service": "geo-team",
    "courier-api": "dispatch-team",
    "menu-service": "catalog-team",
}

TIMEOUTS = {
    "orders-api": 1800,
    "catalog-api": 900,
    "accounts-api": 700,
    "courier-api": 800,
    "ratings-service": 600,
    "pricing-service": 600,
    "payments-service": 2500,
    "dispatch-service": 1200,
    "notify-service": 1500,
    "menu-service": 500,
    "search-service": 700,
    "identity-service": 500,
    "geo-service": 400,
    "eta-service": 500,
    "promo-service": 300,
    "ledger-service": 1500,
    "fraud-service": 600,
    "push-relay": 2000,
}
"""Per callee: the client timeout its callers use, in ms (healthy)."""

BACKOFF = {"edge-gateway": 100}
"""Per caller: base backoff of its retries, in ms (default 200)."""


def app_deps(s: Service) -> list[str]:
    """The Python services `s` calls (its clients have retry and timeout settings)."""
    return [d for d in s.deps if BY_NAME[d].code]


def config_of(s: Service) -> dict[str, object]:
    """The healthy runtime config of a service, before any push."""
    cfg: dict[str, object] = {"log_level": "INFO", "log_sampling_pct": 10}
    if s.code:
        cfg["cache.ttl_s"] = 300
        for d in app_deps(s):
            cfg[f"{d}.host"] = f"{d}.{DOMAIN}"
            cfg[f"{d}.timeout_ms"] = TIMEOUTS[d]
            cfg[f"{d}.retries"] = 2
            cfg[f"{d}.retry_backoff_ms"] = BACKOFF.get(s.name, 200)
            cfg[f"{d}.retry_jitter"] = True
            cfg[f"{d}.tls"] = True
    cfg.update(s.extra_config)
    return dict(sorted(cfg.items()))


def callers_of(name: str, present: set[str]) -> list[str]:
    """The present services that call `name` directly."""
    return [s.name for s in SERVICES if s.name in present and name in s.deps]


def path_to_edge(name: str) -> list[str]:
    """The shortest chain of callers from the edge gateway down to `name`, both included."""
    frontier = [["edge-gateway"]]
    seen = {"edge-gateway"}
    while frontier:
        path = frontier.pop(0)
        if path[-1] == name:
            return path
        for d in BY_NAME[path[-1]].deps:
            if d not in seen:
                seen.add(d)
                frontier.append([*path, d])
    raise ValueError(name)


def upstream(name: str, present: set[str]) -> list[str]:
    """Every present service that calls `name`, directly or not, nearest first."""
    out: list[str] = []
    frontier = [name]
    while frontier:
        current = frontier.pop(0)
        for c in callers_of(current, present):
            if c not in out and c != name:
                out.append(c)
                frontier.append(c)
    return out
