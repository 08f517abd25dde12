"""Writes the `[[variants.fault]]` tables of scenario.toml (everything below its GENERATED line).

One table per (service, mechanism) of pods running out of memory on the shop:

- surge: more traffic than the replicas can absorb (a campaign, a crawler, a partner's batch
  job); requests and their buffers pile up per pod until the kubelet OOM-kills it. Scale out;
  a restart changes nothing (fault kind `capacity`).
- growth: per-pod state (sessions, a cache keyed by active users) grows with the number of
  active users; a restart empties it for a while, more replicas split it for good (fault kind
  `memory_leak`: a restart only buys minutes).
- boot: a new release allocates far more at start (a preloaded cache, a model, a thread pool)
  and is OOM-killed before it is ready; more replicas only crash too. Roll the release back
  (fault kind `deployment`).

The tables are data; this file spells out the repetitive parts once. Run it after editing
SITES:

    python -m tools.families regenerate user_service_oom
"""

from __future__ import annotations

import math
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
from ..shop import release_fields

HERE = SCENARIOS / "user_service_oom"

# name: (code dir, release at the topology's tip, replicas, memory limit, what its pods serve)
SHOP = {
    "api-gateway": ("api_gateway", "v1.12.0", 4, "512Mi", "requests"),
    "auth-service": ("auth_service", "v3.2.0", 3, "384Mi", "token verifications"),
    "user-service": ("user_service", "v1.10.0", 3, "512Mi", "profile reads"),
    "notification-service": ("notification_service", "v0.8.1", 2, "256Mi", "notification enqueues"),
    "checkout-service": ("checkout_service", "v1.4.0", 3, "512Mi", "checkouts"),
    "order-service": ("order_service", "v2.1.0", 3, "512Mi", "order placements"),
    "inventory-service": ("inventory_service", "v1.4.1", 3, "512Mi", "stock reservations"),
    "payment-service": ("payment_service", "v2.3.1", 3, "512Mi", "charges"),
    "redis-cache": (None, "redis-7.2.4", 2, "2gb", "commands"),
}

EDGE = {
    "api-gateway": ("Shop API answering 503", "the edge answers 503 on a growing share of routes"),
    "auth-service": (
        "Logins and authenticated calls failing",
        "authenticated routes answer 503 for a growing share of requests",
    ),
    "user-service": (
        "Profile pages failing",
        "GET /v1/users/* answers 503 for a growing share of requests",
    ),
    "notification-service": (
        "Order confirmation e-mails delayed",
        "customers report late or missing order confirmations",
    ),
    "checkout-service": ("Checkout failing", "POST /v1/checkout answers 503 intermittently"),
    "order-service": ("Checkout failing", "POST /v1/checkout answers 503 intermittently"),
    "inventory-service": ("Checkout failing", "POST /v1/checkout answers 503 intermittently"),
    "payment-service": (
        "Payments failing at the edge",
        "POST /v1/payments/charge answers 503 intermittently",
    ),
    "redis-cache": ("Logins failing", "authenticated routes answer 503 intermittently"),
}


class Mechanism(TypedDict):
    """What one out-of-memory mechanism does to its service, and the evidence it leaves."""

    kind: str
    """The fault kind: capacity, memory_leak or deployment."""
    logs: list[LogBlock]
    terminal: list[str]
    cause: str
    wrong: str
    """The plausible wrong fix: "restart" or "scale"."""
    change: str
    """What the bad release changed (boot only; else empty)."""


def symptoms(root: str) -> tuple[Effects, list[LogBlock], list[str]]:
    """Effects, log blocks and symptom services upstream of an out-of-memory `root`.

    The root loses pods to the OOM killer (or never gets any ready).
    """
    effects: Effects = {}
    logs: list[LogBlock] = []

    def add(service: str, level: str, lines: list[str], **effect: float) -> None:
        effects[service] = effect
        logs.append(log(service, level, *lines))

    went = "reset the connection (pod went away mid-request)"
    if root in ("auth-service", "redis-cache"):
        if root == "redis-cache":
            add(
                "auth-service",
                "ERROR",
                [
                    "redis-cache refused the revocation lookup: OOM command not allowed when used"
                    " memory > 'maxmemory'; failing closed, answering 503",
                ],
                error_rate=0.3,
                p99_ms=120,
            )
            add(
                "notification-service",
                "WARN",
                [
                    "redis-cache refused the outbox write for ord-5c2e9a07f13b: OOM command not"
                    " allowed when used memory > 'maxmemory'; kept in memory for a later attempt",
                ],
                error_rate=0.02,
                queue_depth=40,
            )
        add(
            "api-gateway",
            "ERROR",
            [
                f"auth-service {went} verifying a bearer token for POST /v1/checkout;"
                " answering 503",
            ],
            error_rate=0.09,
            p99_ms=200,
        )
    elif root in ("user-service", "checkout-service", "payment-service"):
        route = {
            "user-service": "GET /v1/users/u-4821",
            "checkout-service": "POST /v1/checkout",
            "payment-service": "POST /v1/payments/charge",
        }[root]
        add(
            "api-gateway",
            "WARN",
            [
                f"upstream {root} {went} for {route}; answering 503",
                f"{route.split(' u-')[0]} 503 upstream={root}",
            ],
            error_rate=0.08,
            p99_ms=260,
        )
    elif root == "order-service":
        add(
            "checkout-service",
            "ERROR",
            [
                f"order-service {went} placing ord-7b21e08c5a94; answering 503 order_unavailable",
            ],
            error_rate=0.12,
        )
        add(
            "api-gateway",
            "WARN",
            [
                "upstream checkout-service answered 503 for POST /v1/checkout; passing it on",
            ],
            error_rate=0.06,
        )
    elif root == "inventory-service":
        add(
            "order-service",
            "ERROR",
            [
                f"reservation for ord-0f3a9c41d2e7 failed: inventory-service {went}",
            ],
            error_rate=0.12,
        )
        add(
            "checkout-service",
            "WARN",
            [
                "order-service answered 503 for ord-0f3a9c41d2e7; answering 503 order_unavailable",
            ],
            error_rate=0.1,
        )
        add(
            "api-gateway",
            "WARN",
            [
                "upstream checkout-service answered 503 for POST /v1/checkout; passing it on",
            ],
            error_rate=0.06,
        )
    elif root == "notification-service":
        add(
            "checkout-service",
            "WARN",
            [
                f"notification-service {went}: confirmation e-mail for ord-5c2e9a07f13b left in"
                " the outbox for a later attempt",
            ],
            error_rate=0.004,
            queue_depth=30,
        )
    return effects, logs, list(effects)


def required(replicas: int, factor: float) -> int:
    """The runbook's rule: each pod back near its load-tested level, plus one spare."""
    return math.ceil(replicas * factor / 1.15) + 1


def surge(s: str, pod: str, factor: float, source: str) -> Mechanism:
    """More traffic than the replicas can absorb, from `source`: scale out."""
    _code_dir, _, replicas, limit, serves = SHOP[s]
    if s == "redis-cache":
        lines = [
            f"used_memory 1.97G reached the memory limit (maxmemory {limit}) with {factor}x the"
            f" usual key count for this hour ({source}); rejecting writes",
            f"OOM command not allowed when used memory > 'maxmemory' ({factor}x the usual keys)",
        ]
    else:
        lines = [
            f"{serves} at {factor}x the 7-day baseline for this hour (traffic from {source});"
            f" accept queue 655 deep, 64/64 in flight per pod",
            f"container {s} in pod {s}-{pod} OOMKilled (exit code 137, memory limit {limit})"
            f" holding {factor}x its usual in-flight {serves}; kubelet restarting it",
        ]
    return Mechanism(
        kind="capacity",
        logs=[log(s, "ERROR", *lines)],
        terminal=[f"on-call chat: dashboards show {serves} up sharply; {source} suspected"],
        cause=(
            f"{source} drove {serves} to {factor}x the usual level for this hour; the"
            f" {replicas} pods cannot absorb it, so requests and their buffers pile up per"
            f" pod until the kubelet OOM-kills it (memory limit {limit}). Nothing was"
            " deployed; a restart changes nothing"
        ),
        wrong="restart",
        change="",
    )


def growth(s: str, pod: str, factor: float, what: str) -> Mechanism:
    """Per-pod state (`what`) that grows with the active users: scale out."""
    _code_dir, _, _replicas, limit, _serves = SHOP[s]
    lines = [
        f"{what} holds {factor}x the active users of the 7-day baseline for this hour;"
        f" RSS {int(int(limit.removesuffix('Mi')) * 0.97)}Mi of the {limit} memory limit in pod"
        f" {s}-{pod}",
        f"container {s} in pod {s}-{pod} OOMKilled (exit code 137, memory limit {limit}) with"
        f" {what} at {factor}x its usual size; kubelet restarting it",
    ]
    return Mechanism(
        kind="memory_leak",
        logs=[log(s, "WARN", *lines)],
        terminal=[
            f"kubectl get pods -l app={s}: {s}-{pod}  1/1  Running  (restarts: 5,"
            " last state: OOMKilled)"
        ],
        cause=(
            f"{what} in each {s} pod grows with the number of active users, now {factor}x"
            f" the usual for this hour, until the pod reaches its {limit} limit and is"
            " OOM-killed. A restart empties it for a few minutes; more replicas split the"
            " users for good"
        ),
        wrong="restart",
        change="",
    )


def boot(s: str, pod: str, what: str, peak: str) -> Mechanism:
    """A release that allocates `peak` at start and is killed before it is ready: roll back."""
    _code_dir, _, replicas, limit, _serves = SHOP[s]
    return Mechanism(
        kind="deployment",
        logs=[
            log(
                s,
                "FATAL",
                f"container {s} failed to start: OOMKilled during warm-up (exit code 137,"
                f" memory limit {limit}); {{bad}} {what} before serving, RSS {peak} at the"
                " kill",
            ),
            log(
                s,
                "WARN",
                f"Back-off restarting failed container {s} in pod {s}-{pod} (CrashLoopBackOff,"
                " last state: OOMKilled)",
                f"readiness probe failed: 0/{replicas} pods of {s} {{bad}} ready",
            ),
        ],
        terminal=[
            f"kubectl get pods -l app={s}: {s}-{pod}  0/1  CrashLoopBackOff  (restarts:"
            " 6, last state: OOMKilled)"
        ],
        cause=(
            f"{s} {{bad}} {what} at start, which needs about {peak} against the {limit}"
            " limit: every pod is OOM-killed before it is ready and crash-loops. More"
            " replicas only crash the same way"
        ),
        wrong="scale",
        change=what,
    )


MECHANISMS: dict[str, Callable[..., Mechanism]] = {"surge": surge, "growth": growth, "boot": boot}

# (service, mechanism, fields); boot rows also give (good, bad, author).
SITES: list[tuple[str, str, dict[str, Any]]] = [
    (
        "api-gateway",
        "surge",
        dict(factor=2.4, source="a search-engine crawler ignoring robots.txt"),
    ),
    (
        "api-gateway",
        "boot",
        dict(
            what="loads the full GeoIP database into memory",
            peak="655Mi",
            good="v1.12.1",
            bad="v1.13.0",
            author="ines@edge-team",
        ),
    ),
    ("auth-service", "growth", dict(factor=2.1, what="the in-process session cache")),
    (
        "auth-service",
        "boot",
        dict(
            what="builds the password-breach bloom filter",
            peak="471Mi",
            good="v3.2.1",
            bad="v3.3.0",
            author="nadia@identity-team",
        ),
    ),
    ("user-service", "surge", dict(factor=2.2, source="the spring-sale push notification")),
    (
        "user-service",
        "boot",
        dict(
            what="preloads every profile into the profile cache",
            peak="780Mi",
            good="v1.10.1",
            bad="v1.11.0",
            author="rosa@accounts-team",
        ),
    ),
    (
        "user-service",
        "boot",
        dict(
            what="loads the locale and timezone tables for every region",
            peak="598Mi",
            good="v1.11.1",
            bad="v1.11.2",
            author="piotr@accounts-team",
        ),
    ),
    ("notification-service", "surge", dict(factor=2.8, source="the loyalty e-mail blast")),
    (
        "notification-service",
        "boot",
        dict(
            what="compiles every e-mail template in every locale",
            peak="301Mi",
            good="v0.8.2",
            bad="v0.9.0",
            author="yuki@comms-team",
        ),
    ),
    ("checkout-service", "growth", dict(factor=1.9, what="the per-user cart snapshot cache")),
    (
        "checkout-service",
        "boot",
        dict(
            what="starts 64 worker threads with 8 MiB stacks each",
            peak="689Mi",
            good="v1.4.1",
            bad="v1.5.0",
            author="tomas@commerce-team",
        ),
    ),
    ("order-service", "surge", dict(factor=2.5, source="a partner's bulk order import")),
    (
        "order-service",
        "boot",
        dict(
            what="replays the last 30 days of order events into memory",
            peak="911Mi",
            good="v2.1.1",
            bad="v2.2.0",
            author="kofi@commerce-team",
        ),
    ),
    (
        "order-service",
        "boot",
        dict(
            what="loads the fraud-rules model",
            peak="702Mi",
            good="v2.2.1",
            bad="v2.2.2",
            author="sara@commerce-team",
        ),
    ),
    ("inventory-service", "surge", dict(factor=2.0, source="the flash sale on garden furniture")),
    (
        "inventory-service",
        "boot",
        dict(
            what="warms the SKU availability cache for every warehouse",
            peak="846Mi",
            good="v1.4.2",
            bad="v1.5.0",
            author="dmitri@commerce-team",
        ),
    ),
    ("payment-service", "surge", dict(factor=1.8, source="the Nordic storefront launch")),
    ("payment-service", "growth", dict(factor=2.3, what="the idempotency-key cache")),
    (
        "payment-service",
        "boot",
        dict(
            what="loads the BIN range table for card routing",
            peak="733Mi",
            good="v2.4.0",
            bad="v2.4.1",
            author="mei@payments-team",
        ),
    ),
    (
        "payment-service",
        "boot",
        dict(
            what="preloads the provider's full currency rate history",
            peak="618Mi",
            good="v2.4.2",
            bad="v2.5.0",
            author="omar@payments-team",
        ),
    ),
    ("redis-cache", "surge", dict(factor=2.4, source="session keys of the mobile app v5 relaunch")),
    ("checkout-service", "surge", dict(factor=2.6, source="the Black Friday preview sale")),
    ("auth-service", "surge", dict(factor=2.2, source="the TV campaign's sign-up and login spike")),
    (
        "inventory-service",
        "boot",
        dict(
            what="loads the whole warehouse slotting map",
            peak="657Mi",
            good="v1.5.1",
            bad="v1.5.2",
            author="sara@commerce-team",
        ),
    ),
    ("notification-service", "growth", dict(factor=2.6, what="the per-user digest buffer")),
    (
        "api-gateway",
        "boot",
        dict(
            what="compiles the full WAF rule set",
            peak="590Mi",
            good="v1.13.1",
            bad="v1.13.2",
            author="lars@edge-team",
        ),
    ),
    (
        "auth-service",
        "boot",
        dict(
            what="loads every tenant's JWKS history",
            peak="452Mi",
            good="v3.3.1",
            bad="v3.3.2",
            author="felix@identity-team",
        ),
    ),
]

PODS = [
    "6d8f7b9c5-k2vxm",
    "7c4b9d8f6-p9wqt",
    "5f9c6d7b8-r4ztn",
    "8b6c5d9f7-j3nqs",
    "9c7d6f5b8-v5lrx",
    "6f5b9c8d7-z8kdm",
]


def table(index: int, site: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """The `[[variants.fault]]` table of the `index`-th site (its fields dict is consumed)."""
    service, mech, fields = site
    code_dir, tip, replicas, _limit, _serves = SHOP[service]
    pod = PODS[index % len(PODS)]
    release = {k: fields.pop(k) for k in ("good", "bad", "author") if k in fields}
    m = MECHANISMS[mech](service, pod, **fields)
    effects, logs, chain = symptoms(service)
    if mech == "boot":
        effects = {service: {"error_rate": 1.0, "memory": 0.4}, **effects}
    else:
        effects = {
            service: {
                "memory": 0.38,
                "error_rate": 0.14,
                "p99_ms": 900,
                "queue_depth": 60,
                "cpu": 0.2,
            },
            **effects,
        }
    bad = release.get("bad", "")

    def fill(text: str) -> str:
        return text.replace("{bad}", bad)

    for block in m["logs"]:
        block["lines"] = [fill(line) for line in block["lines"]]
    factor = fields.get("factor")
    need = required(replicas, factor) if factor else 0
    truth = (
        {
            "location": f"deployment:{service}@{bad}",
            "category": "bad_deployment",
            "remediation": "rollback_deployment",
        }
        if mech == "boot"
        else {
            "location": f"service:{service}",
            "category": "capacity",
            "remediation": "scale_service",
        }
    )
    if mech == "boot":
        fix = {
            "tool": "rollback_deployment",
            "args": {"service": service, "to_version": release["good"]},
        }
        checks = [deployed_check(service, release["good"])]
        params = {"bad_version": bad}
        done = f"Rolled {service} back to {release['good']}"
    else:
        fix = {"tool": "scale_service", "args": {"service": service, "replicas": need}}
        checks = [
            {
                "name": f"{service} runs at least {need} replicas",
                "kind": "replicas_at_least",
                "service": service,
                "replicas": need,
            }
        ]
        params = {"required_replicas": need}
        done = (
            f"Scaled {service} from {replicas} to {need} replicas (runbook: ceil({replicas}"
            f" x {factor} / 1.15) + 1 spare)"
        )
    checks.append(healthy_check(service))
    if "api-gateway" in chain:
        checks.append(healthy_check("api-gateway"))
    if m["wrong"] == "restart":
        wrong = wrong_fix(
            "restart_service",
            {"service": service},
            service,
            "capacity",
            f"{service} pods were OOMKilled; restarted them and memory dropped back.",
        )
    else:
        wrong = wrong_fix(
            "scale_service",
            {"service": service, "replicas": 2 * replicas},
            service,
            "capacity",
            f"{service} pods were OOMKilled; added replicas.",
        )
    return {
        "key": f"{service.removesuffix('-service')}-{mech}" + (f"-{bad}" if mech == "boot" else ""),
        "service": service,
        "code_dir": code_dir or "",
        "mechanism": mech,
        "difficulty": "easy" if mech == "surge" else "medium",
        "kind": m["kind"],
        "params": params,
        "boot": mech == "boot",
        "good": release.get("good", ""),
        "bad": bad,
        "author": release.get("author", ""),
        **release_fields(service, tip, release.get("good"), bad),
        "change": m["change"],
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
        "wrong": wrong,
    }


def axes() -> str:
    """The main axis, from SITES."""
    tables = [table(index, (*site[:-1], dict(site[-1]))) for index, site in enumerate(SITES)]
    return fault_axis(tables, BARE_DASHED_KEYS)
