"""Writes the `[[variants.fault]]` tables of scenario.toml (everything below its GENERATED line).

One table per (service, mechanism) of a bad release on the shop: the site, the versions, the
evidence the broken release leaves (logs, terminal), who feels it upstream, the fix and the
plausible wrong fix. The tables are data; this file only spells out the repetitive parts (each
service's callers and their log lines) once. Run it after editing SITES or MECHANISMS:

    python -m tools.families regenerate payment_bad_deploy
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

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
from ..shop import image as shop_image
from ..shop import release_fields

HERE = SCENARIOS / "payment_bad_deploy"

# The shop's Python services: code folder, release at the tip of the topology, replicas, what
# a customer does through it, and who calls it (the symptom chain, nearest caller first).
SHOP = {
    "api-gateway": ("api_gateway", "v1.12.0", 4, "every public request"),
    "auth-service": ("auth_service", "v3.2.0", 3, "token verification"),
    "user-service": ("user_service", "v1.10.0", 3, "GET /v1/users/u-4821"),
    "notification-service": ("notification_service", "v0.8.1", 2, "order confirmation e-mails"),
    "checkout-service": ("checkout_service", "v1.4.0", 3, "POST /v1/checkout"),
    "order-service": ("order_service", "v2.1.0", 3, "POST /v1/orders"),
    "inventory-service": ("inventory_service", "v1.4.1", 3, "POST /v1/stock/reserve"),
    "payment-service": ("payment_service", "v2.3.1", 3, "POST /v1/payments/charge"),
}


class Mechanism(TypedDict):
    """What one bad-release mechanism does to its service, and the evidence it leaves."""

    down: bool
    """Whether no pod of the release serves (else the pods run and some calls fail)."""
    logs: list[LogBlock]
    terminal: list[str]
    change: str
    """The commit's one-line summary."""
    cause: str
    wrong: str | tuple[str, str]
    """The plausible wrong fix: "restart", or ("rollback", the healthy dependency blamed)."""


def symptoms(root: str, down: bool) -> tuple[Effects, list[LogBlock], list[str]]:
    """Effects, log blocks and symptom services upstream of a failing `root`."""
    gone = "no healthy endpoints" if down else "answered 500"
    effects: Effects = {}
    logs: list[LogBlock] = []

    def add(service: str, level: str, lines: list[str], **effect: float) -> None:
        effects[service] = effect
        logs.append(log(service, level, *lines))

    gw_err = 0.22 if down else 0.12
    if root == "auth-service":
        add(
            "api-gateway",
            "ERROR",
            [
                f"auth-service {gone} verifying bearer tokens for POST /v1/checkout; answering 503",
                f"auth-service {gone} verifying bearer tokens for GET /v1/users/u-1093;"
                " answering 503",
            ],
            error_rate=gw_err + 0.2,
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
    elif root in ("user-service", "checkout-service", "payment-service"):
        route = SHOP[root][3]
        add(
            "api-gateway",
            "ERROR",
            [
                f"upstream {root} {gone} for {route}; answering 502",
                f"{route} 502 upstream={root}",
            ],
            error_rate=gw_err,
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
        add(
            "api-gateway",
            "WARN",
            [
                "upstream checkout-service answered 503 for POST /v1/checkout; passing it on",
            ],
            error_rate=gw_err * 0.6,
        )
    elif root == "inventory-service":
        add(
            "order-service",
            "ERROR",
            [
                f"reservation for ord-0f3a9c41d2e7 failed: inventory-service {gone}",
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
        add(
            "api-gateway",
            "WARN",
            [
                "upstream checkout-service answered 503 for POST /v1/checkout; passing it on",
            ],
            error_rate=gw_err * 0.6,
        )
    elif root == "notification-service":
        add(
            "checkout-service",
            "WARN",
            [
                f"notification-service {gone}: confirmation e-mail for ord-5c2e9a07f13b left in the"
                " outbox for a later retry",
            ],
            error_rate=0.004,
            queue_depth=30,
        )
    chain = [s for s in effects]
    return effects, logs, chain


def crash_lines(service: str, bad: str, pod: str, replicas: int, code: int) -> list[str]:
    """The kubelet's CrashLoopBackOff and readiness lines for `service` at release `bad`."""
    return [
        f"Back-off restarting failed container {service} in pod {service}-{pod}"
        f" (CrashLoopBackOff, exit code {code})",
        f"readiness probe failed: 0/{replicas} pods of {service} {bad} ready",
    ]


# Each mechanism: (down?, root log blocks, terminal lines, the commit's one-line summary,
# wrong fix kind). Placeholders: {s} service, {c} code dir, {b} bad version, {g} good version,
# {p} pod, {r} replicas, plus the mechanism's own fields.
def mech_env(s: str, c: str, b: str, g: str, p: str, r: int, var: str, why: str) -> Mechanism:
    """A release that reads an environment variable its manifest does not define."""
    return Mechanism(
        down=True,
        logs=[
            log(
                s,
                "FATAL",
                f"{s} {b} failed to start: required environment variable {var} is not set"
                f" ({c}/config.py reads it since {b}; the deployment manifest does not"
                " define it)",
            ),
            log(s, "WARN", *crash_lines(s, b, p, r, 78)),
        ],
        terminal=[f"kubectl get pods -l app={s}: {s}-{p}  0/1  CrashLoopBackOff  (restarts: 7)"],
        change=f"read {why} from {var}",
        cause=(
            f"{s} {b} reads the new required environment variable {var} at start, but the"
            " deployment manifest never defines it, so every pod exits 78 and crash-loops"
        ),
        wrong="restart",
    )


def mech_image(s: str, c: str, b: str, g: str, p: str, r: int, tag: str, why: str) -> Mechanism:
    """A release whose manifest names an image tag the pipeline never pushed."""
    image = shop_image(s, b)
    return Mechanism(
        down=True,
        logs=[
            log(
                s,
                "ERROR",
                f'Failed to pull image "{image}": manifest unknown: tag {b} not found'
                f" (the pipeline pushed {tag})",
            ),
            log(
                s,
                "WARN",
                f'pod {s}-{p}: ImagePullBackOff: Back-off pulling image "{image}"',
                f"readiness probe failed: 0/{r} pods of {s} {b} ready (strategy Recreate:"
                f" the {g} pods were already terminated)",
            ),
        ],
        terminal=[f"kubectl get pods -l app={s}: {s}-{p}  0/1  ImagePullBackOff  (restarts: 0)"],
        change=why,
        cause=(
            f"the manifest of {s} {b} names image tag {b}, but the pipeline pushed {tag}; no"
            f" pod can pull its image and the Recreate rollout had already removed the {g}"
            " pods"
        ),
        wrong="restart",
    )


def mech_exec(s: str, c: str, b: str, g: str, p: str, r: int, why: str) -> Mechanism:
    """A release whose image was built for another CPU architecture."""
    return Mechanism(
        down=True,
        logs=[
            log(
                s,
                "FATAL",
                f"container {s} failed to start: exec /usr/local/bin/python: exec format error"
                f" (image {s}:{b} is linux/arm64, node pool is linux/amd64)",
            ),
            log(s, "WARN", *crash_lines(s, b, p, r, 1)),
        ],
        terminal=[f"kubectl get pods -l app={s}: {s}-{p}  0/1  CrashLoopBackOff  (restarts: 8)"],
        change=why,
        cause=(
            f"the {s} {b} image was built for linux/arm64 only (the release job moved to the"
            " new arm runners) and cannot run on the amd64 nodes: every container exits at"
            " start and crash-loops"
        ),
        wrong="restart",
    )


def mech_sharedlib(s: str, c: str, b: str, g: str, p: str, r: int, lib: str, why: str) -> Mechanism:
    """A release on a base image that lacks a shared library it loads."""
    return Mechanism(
        down=True,
        logs=[
            log(
                s,
                "FATAL",
                f"{s} {b} failed to start: error while loading shared libraries: {lib}: cannot"
                f" open shared object file: No such file or directory (image {s}:{b} is built"
                " on the slim base image)",
            ),
            log(s, "WARN", *crash_lines(s, b, p, r, 127)),
        ],
        terminal=[f"kubectl get pods -l app={s}: {s}-{p}  0/1  CrashLoopBackOff  (restarts: 6)"],
        change=f"{why}; build on the slim base image",
        cause=(
            f"{s} {b} moved to the slim base image, which lacks {lib}; the interpreter's"
            " extension cannot load it, so every container exits 127 at start and"
            " crash-loops"
        ),
        wrong="restart",
    )


def mech_schema(
    s: str, c: str, b: str, g: str, p: str, r: int, table: str, column: str, why: str
) -> Mechanism:
    """A release that queries a column whose migration ships later."""
    return Mechanism(
        down=False,
        logs=[
            log(
                s,
                "ERROR",
                f"psycopg.errors.UndefinedColumn: column {table}.{column} does not exist"
                f" (query added in {b}); answering 500",
                f"500 on {SHOP[s][3]}: column {table}.{column} does not exist",
            ),
        ],
        terminal=[
            f"release-bot: {s} {b} rolled out (3/3 pods ready; the migration adding"
            f" {table}.{column} is in the next release)"
        ],
        change=f"{why} ({table}.{column})",
        cause=(
            f"{s} {b} reads {table}.{column}, but the migration that adds the column ships"
            " in a later release: the pods start, then every request on that path fails"
        ),
        wrong="restart",
    )


def mech_endpoint(
    s: str, c: str, b: str, g: str, p: str, r: int, dep: str, old: str, new: str, why: str
) -> Mechanism:
    """A release whose client still calls a route its dependency removed."""
    return Mechanism(
        down=False,
        logs=[
            log(
                s,
                "ERROR",
                f"POST {old} on {dep} answered 404 Not Found: route does not exist"
                f" ({s} {b} ships shop-clients 1.9, which still calls {old}; {dep} serves"
                f" {new} since its last release)",
            ),
        ],
        terminal=[f"release-bot: {s} {b} rolled out (3/3 pods ready)"],
        change=f"{why} (bumps shop-clients)",
        cause=(
            f"{s} {b} pins shop-clients 1.9, whose {dep} client still calls {old}, a route"
            f" {dep} removed in favour of {new}; every such call gets 404"
        ),
        wrong=("rollback", dep),
    )


MECHANISMS: dict[str, Callable[..., Mechanism]] = {
    "env": mech_env,
    "image": mech_image,
    "exec": mech_exec,
    "sharedlib": mech_sharedlib,
    "schema": mech_schema,
    "endpoint": mech_endpoint,
}

# (service, mechanism, good, bad, author, mechanism fields...)
SITES: list[tuple[str, str, str, str, str, dict[str, str]]] = [
    (
        "api-gateway",
        "env",
        "v1.12.1",
        "v1.13.0",
        "ines@edge-team",
        dict(var="GATEWAY_RATE_LIMIT_REDIS_URL", why="the per-client rate limit store"),
    ),
    (
        "api-gateway",
        "image",
        "v1.12.2",
        "v1.12.3",
        "ines@edge-team",
        dict(tag="1.12.3", why="shorter upstream deadlines for /v1/users"),
    ),
    (
        "api-gateway",
        "exec",
        "v1.13.1",
        "v1.13.2",
        "lars@edge-team",
        dict(why="drop the legacy /v0 routes"),
    ),
    (
        "api-gateway",
        "endpoint",
        "v1.12.4",
        "v1.12.5",
        "lars@edge-team",
        dict(
            dep="user-service",
            old="/v1/users/lookup",
            new="/v2/users/lookup",
            why="batch user lookups",
        ),
    ),
    (
        "auth-service",
        "env",
        "v3.2.1",
        "v3.3.0",
        "nadia@identity-team",
        dict(var="AUTH_JWKS_ROTATION_BUCKET", why="the signing key rotation bucket"),
    ),
    (
        "auth-service",
        "image",
        "v3.3.1",
        "v3.3.2",
        "nadia@identity-team",
        dict(tag="v3.3.2-rc1", why="argon2 parameters from config"),
    ),
    (
        "auth-service",
        "sharedlib",
        "v3.2.2",
        "v3.2.3",
        "felix@identity-team",
        dict(lib="libargon2.so.1", why="hash new passwords with argon2"),
    ),
    (
        "user-service",
        "env",
        "v1.10.1",
        "v1.11.0",
        "rosa@accounts-team",
        dict(var="USER_AVATAR_BUCKET", why="the avatar bucket"),
    ),
    (
        "user-service",
        "schema",
        "v1.10.2",
        "v1.10.3",
        "rosa@accounts-team",
        dict(table="users", column="marketing_opt_in", why="return the marketing consent"),
    ),
    (
        "user-service",
        "exec",
        "v1.11.1",
        "v1.11.2",
        "piotr@accounts-team",
        dict(why="cache locale lookups"),
    ),
    (
        "user-service",
        "endpoint",
        "v1.10.4",
        "v1.10.5",
        "piotr@accounts-team",
        dict(
            dep="auth-service",
            old="/v1/sessions/verify",
            new="/v1/auth/verify",
            why="check sessions through the shared client",
        ),
    ),
    (
        "notification-service",
        "env",
        "v0.8.2",
        "v0.9.0",
        "yuki@comms-team",
        dict(var="NOTIFY_SMS_API_KEY", why="the SMS provider key"),
    ),
    (
        "notification-service",
        "image",
        "v0.9.1",
        "v0.9.2",
        "yuki@comms-team",
        dict(tag="0.9.2", why="batch SMTP sends"),
    ),
    (
        "notification-service",
        "sharedlib",
        "v0.8.3",
        "v0.8.4",
        "hugo@comms-team",
        dict(lib="libxml2.so.2", why="inline CSS in e-mail templates"),
    ),
    (
        "checkout-service",
        "image",
        "v1.4.1",
        "v1.4.2",
        "amara@commerce-team",
        dict(tag="v1.4.2-amd64", why="idempotent checkout retries"),
    ),
    (
        "checkout-service",
        "exec",
        "v1.5.0",
        "v1.5.1",
        "tomas@commerce-team",
        dict(why="gift card line items"),
    ),
    (
        "checkout-service",
        "endpoint",
        "v1.4.3",
        "v1.5.0",
        "tomas@commerce-team",
        dict(
            dep="order-service",
            old="/v1/orders/place",
            new="/v1/orders",
            why="place orders through the shared client",
        ),
    ),
    (
        "order-service",
        "env",
        "v2.1.1",
        "v2.2.0",
        "kofi@commerce-team",
        dict(var="ORDERS_EVENTS_TOPIC", why="the order events topic"),
    ),
    (
        "order-service",
        "sharedlib",
        "v2.2.1",
        "v2.2.2",
        "kofi@commerce-team",
        dict(lib="libsnappy.so.1", why="compress order events"),
    ),
    (
        "order-service",
        "endpoint",
        "v2.1.2",
        "v2.1.3",
        "sara@commerce-team",
        dict(
            dep="inventory-service",
            old="/v1/stock/hold",
            new="/v1/stock/reserve",
            why="reserve stock through the shared client",
        ),
    ),
    (
        "inventory-service",
        "env",
        "v1.4.2",
        "v1.5.0",
        "dmitri@commerce-team",
        dict(var="INVENTORY_WAREHOUSE_ID", why="the warehouse id"),
    ),
    (
        "inventory-service",
        "image",
        "v1.5.1",
        "v1.5.2",
        "dmitri@commerce-team",
        dict(tag="v1.5.2-hotfix", why="faster stock counts"),
    ),
    (
        "inventory-service",
        "exec",
        "v1.4.3",
        "v1.4.4",
        "sara@commerce-team",
        dict(why="bulk reservations"),
    ),
    (
        "payment-service",
        "schema",
        "v2.4.0",
        "v2.4.1",
        "mei@payments-team",
        dict(table="payments", column="risk_score", why="return the provider's risk score"),
    ),
    (
        "payment-service",
        "env",
        "v2.5.0",
        "v2.6.0",
        "jonas@payments-team",
        dict(var="PAYMENT_WEBHOOK_SECRET", why="the card provider's webhook secret"),
    ),
    (
        "payment-service",
        "image",
        "v2.4.3",
        "v2.4.4",
        "omar@payments-team",
        dict(tag="2.4.4", why="3-D Secure for SEK and NOK"),
    ),
    (
        "payment-service",
        "exec",
        "v2.5.1",
        "v2.5.2",
        "omar@payments-team",
        dict(why="capture retries with backoff"),
    ),
]

# What the page says: the customer-facing symptom, not the cause.
EDGE = {
    "api-gateway": ("Shop API failing at the edge", "api-gateway answers 5xx on every route"),
    "auth-service": (
        "Logins and authenticated calls failing",
        "customers are logged out and authenticated routes answer 503",
    ),
    "user-service": ("Profile pages failing", "GET /v1/users/* answers 502 at the edge"),
    "notification-service": (
        "Order confirmation e-mails not going out",
        "customers report missing order confirmations",
    ),
    "checkout-service": ("Checkout failing", "POST /v1/checkout answers 5xx at the edge"),
    "order-service": ("Checkout failing", "POST /v1/checkout answers 503 at the edge"),
    "inventory-service": ("Checkout failing", "POST /v1/checkout answers 503 at the edge"),
    "payment-service": (
        "Payments failing at the edge",
        "POST /v1/payments/charge answers 502 at the edge",
    ),
}

PODS = [
    "7d9f4c6b8-x2klp",
    "5b8c7f9d4-q7wzn",
    "6f4d8b7c9-m3rtv",
    "8c5d7f6b9-t4hzs",
    "6b7c8d9f4-w8kpn",
    "9f6b5c8d7-r2jxq",
    "5d8f9b6c7-h6vmt",
]


def difficulty(service: str, mech: str) -> str:
    """The table's difficulty: easy, or medium when the evidence is less direct.

    Easy: the failing service's own pods say what broke. Medium: they start and only some
    calls fail, or the log blames a healthy dependency, or the page is two hops away.
    """
    if mech in ("schema", "endpoint") or service in ("order-service", "inventory-service"):
        return "medium"
    return "easy"


def table(index: int, site: tuple[str, str, str, str, str, dict[str, str]]) -> dict[str, Any]:
    """The `[[variants.fault]]` table of the `index`-th site."""
    service, mech, good, bad, author, fields = site
    code_dir, tip, replicas, _route = SHOP[service]
    pod = PODS[index % len(PODS)]
    m = MECHANISMS[mech](service, code_dir, bad, good, pod, replicas, **fields)
    effects, logs, chain = symptoms(service, m["down"])
    effects = {
        service: {"error_rate": 1.0} if m["down"] else {"error_rate": 0.35, "p99_ms": 30},
        **effects,
    }
    blamed = m["wrong"][1] if isinstance(m["wrong"], tuple) else None
    if blamed is None:  # "restart"
        wrong = wrong_fix(
            "restart_service",
            {"service": service},
            service,
            "crash_loop",
            f"{service} pods were failing; restarted them.",
        )
    else:
        wrong = wrong_fix(
            "rollback_deployment",
            {"service": blamed},
            blamed,
            "bad_deployment",
            f"{blamed} answers 404 to {service}; rolled {blamed} back.",
        )
    return {
        "key": f"{service.removesuffix('-service')}-{mech}",
        "service": service,
        "code_dir": code_dir,
        "mechanism": mech,
        "difficulty": difficulty(service, mech),
        "good": good,
        "bad": bad,
        "author": author,
        **release_fields(service, tip, good, bad),
        "change": m["change"],
        "title": EDGE[service][0],
        "page": EDGE[service][1],
        "effects": effects,
        "logs": m["logs"] + logs,
        "terminal": [{"text": t} for t in m["terminal"]],
        "gateway_alert": service != "api-gateway",
        "state_checks": [
            deployed_check(service, good),
            healthy_check(service),
        ]
        + [healthy_check(s) for s in chain if s == "api-gateway"],
        "symptoms": chain,
        "callers": prose_list(chain, "the customers, directly"),
        "blamed": [blamed] if blamed else [],
        "cause": m["cause"],
        "wrong": wrong,
    }


def axes() -> str:
    """The main axis, from SITES."""
    tables = [table(index, (*site[:-1], dict(site[-1]))) for index, site in enumerate(SITES)]
    return fault_axis(tables, BARE_DASHED_KEYS)
