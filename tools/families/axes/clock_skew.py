"""Writes clock-skew's generated tables: the `[[variants.fault]]` axis and the clock overrides.

Each table is one structure: the host whose clock drifted (the root), the service that sees it
(the observer, which calls the root and names it in its errors), how the drift shows (the root
signs or stamps something the observer checks, "issuer"; or the root checks what the observer
sends it, "server"), and the drift: each row is written twice, its root ahead and behind. The
topology's services are merged by their literal names before a seed is rendered, so the drift
reaches the root through a `clock` table in every fault table (every service's offset for that
structure: the root's drift, milliseconds or a few seconds elsewhere), and one override per
service reads its own key. Run after
changing a row:

    python -m tools.families regenerate clock_skew
"""

from __future__ import annotations

import random
import tomllib
from typing import Any

from ..authoring import SCENARIOS, fault_axis

HERE = SCENARIOS / "clock_skew"

ISSUER, SERVER = "issuer", "server"

# (key, root, observer, edge (the observer's caller that also pages, "" for none), shape,
#  refusal, claim (issuer: the field that looks early or stale; server: the root's error),
#  whose clock the claim is compared with, what the customers see, difficulty,
#  the observer's added error rate, the edge's)
ROWS = [
    (
        "auth-tokens",
        "auth-service",
        "catalog-api",
        "api-gateway",
        ISSUER,
        "refused access tokens issued by",
        "nbf",
        "this host's clock",
        "answering 401 to signed-in shoppers: token verification failed",
        "easy",
        0.41,
        0.14,
    ),
    (
        "sso-assertions",
        "sso-bridge",
        "auth-service",
        "api-gateway",
        ISSUER,
        "refused SAML assertions relayed by",
        "Conditions NotBefore/NotOnOrAfter",
        "this host's clock",
        "enterprise SSO logins loop back to the IdP: assertion rejected",
        "medium",
        0.33,
        0.09,
    ),
    (
        "mfa-totp",
        "mfa-service",
        "auth-service",
        "api-gateway",
        SERVER,
        "TOTP codes",
        "code outside the accepted time-step window (30 s steps, window +-1)",
        "",
        "second-factor step failing for every MFA login",
        "medium",
        0.36,
        0.08,
    ),
    (
        "session-exat",
        "session-store",
        "mfa-service",
        "auth-service",
        SERVER,
        "MFA challenges written with EXAT deadlines",
        "keys already expired on write",
        "",
        "MFA challenges vanish before the user can answer them",
        "hard",
        0.52,
        0.21,
    ),
    (
        "api-keys",
        "accounts-api",
        "api-gateway",
        "edge-proxy",
        ISSUER,
        "refused developer API keys activated by",
        "not_before",
        "this host's clock",
        "developer API calls answering 401",
        "medium",
        0.22,
        0.11,
    ),
    (
        "reset-links",
        "accounts-db",
        "accounts-api",
        "api-gateway",
        ISSUER,
        "refused password reset links stamped by",
        "created_at (now() on the database)",
        "this host's clock",
        "password reset and e-mail verification links refused",
        "hard",
        0.29,
        0.07,
    ),
    (
        "page-cursors",
        "catalog-api",
        "api-gateway",
        "edge-proxy",
        ISSUER,
        "refused page cursors signed by",
        "issued_at",
        "this host's clock",
        "browse pagination failing: next page answers 400",
        "medium",
        0.24,
        0.12,
    ),
    (
        "price-quotes",
        "pricing-service",
        "checkout-api",
        "api-gateway",
        ISSUER,
        "refused price quotes signed by",
        "valid_from/valid_until",
        "this host's clock",
        "checkouts failing: quote rejected, carts re-priced in a loop",
        "easy",
        0.47,
        0.16,
    ),
    (
        "promo-windows",
        "catalog-db",
        "pricing-service",
        "catalog-api",
        ISSUER,
        "refused promotion windows stamped by",
        "starts_at (now() on the database)",
        "this host's clock",
        "promotion prices dropped: quotes fall back to list price",
        "hard",
        0.31,
        0.1,
    ),
    (
        "search-cursors",
        "search-api",
        "api-gateway",
        "edge-proxy",
        ISSUER,
        "refused search cursors signed by",
        "iat",
        "this host's clock",
        "search pagination answering 400 after the first page",
        "medium",
        0.21,
        0.1,
    ),
    (
        "pit-keepalive",
        "search-index",
        "search-api",
        "api-gateway",
        SERVER,
        "point-in-time searches",
        "search_context_missing_exception: PIT keep_alive elapsed",
        "",
        "deep result pages failing: point-in-time contexts gone",
        "hard",
        0.38,
        0.12,
    ),
    (
        "upload-policies",
        "media-api",
        "api-gateway",
        "edge-proxy",
        ISSUER,
        "refused upload policies signed by",
        "policy conditions (start/expiration)",
        "this host's clock",
        "uploads failing with 403 policy errors",
        "medium",
        0.2,
        0.09,
    ),
    (
        "presigned-urls",
        "url-signer",
        "media-cdn",
        "edge-proxy",
        ISSUER,
        "refused presigned URLs signed by",
        "X-Date/X-Expires",
        "this host's clock",
        "segment requests answering 403 SignatureDoesNotMatch/expired",
        "easy",
        0.44,
        0.18,
    ),
    (
        "job-heartbeats",
        "transcoder",
        "media-api",
        "api-gateway",
        ISSUER,
        "refused job heartbeats stamped by",
        "heartbeat timestamp",
        "this host's clock",
        "running transcodes marked dead and re-queued; uploads stuck in processing",
        "medium",
        0.34,
        0.08,
    ),
    (
        "sigv4-puts",
        "object-store",
        "transcoder",
        "media-api",
        SERVER,
        "signed PUT requests",
        "403 RequestTimeTooSkewed",
        "",
        "segment uploads failing; renditions cannot be written",
        "hard",
        0.58,
        0.2,
    ),
    (
        "edge-cookies",
        "media-cdn",
        "edge-proxy",
        "",
        ISSUER,
        "refused signed playback cookies issued by",
        "DateGreaterThan/DateLessThan",
        "this host's clock",
        "video playback failing 403 at the edge",
        "medium",
        0.19,
        0.0,
    ),
    (
        "checkout-sessions",
        "checkout-api",
        "api-gateway",
        "edge-proxy",
        ISSUER,
        "refused checkout session tokens issued by",
        "created_at",
        "this host's clock",
        "checkout pages answering 440 session expired",
        "easy",
        0.26,
        0.12,
    ),
    (
        "stock-holds",
        "inventory-service",
        "checkout-api",
        "api-gateway",
        ISSUER,
        "refused stock holds granted by",
        "hold_until",
        "this host's clock",
        "carts losing their stock hold at payment: reservation expired",
        "medium",
        0.39,
        0.13,
    ),
    (
        "payment-confirmations",
        "payments-service",
        "checkout-api",
        "api-gateway",
        ISSUER,
        "refused payment confirmations signed by",
        "t= (signature timestamp)",
        "this host's clock",
        "paid orders stuck in pending: confirmation signature refused",
        "medium",
        0.43,
        0.15,
    ),
    (
        "acquirer-requests",
        "bank-gateway",
        "payments-service",
        "checkout-api",
        ISSUER,
        "the acquirer refused card captures signed by",
        "X-Request-Timestamp",
        "the acquirer's clock",
        "card captures declined by the acquirer: request timestamp outside tolerance",
        "hard",
        0.51,
        0.24,
    ),
    (
        "ledger-postings",
        "ledger-service",
        "payments-service",
        "checkout-api",
        SERVER,
        "journal postings",
        "entry timestamp outside the open posting window",
        "",
        "captures cannot be journaled; payments held in pending",
        "medium",
        0.37,
        0.14,
    ),
    (
        "journal-rows",
        "payments-db",
        "ledger-service",
        "payments-service",
        ISSUER,
        "refused journal rows stamped by",
        "posted_at (now() on the database)",
        "this host's clock",
        "balance snapshots refusing rows: posted_at out of order",
        "hard",
        0.33,
        0.11,
    ),
    (
        "preference-links",
        "notify-api",
        "api-gateway",
        "edge-proxy",
        ISSUER,
        "refused unsubscribe and preference links signed by",
        "ts",
        "this host's clock",
        "unsubscribe and preference links answering 400",
        "easy",
        0.18,
        0.08,
    ),
    (
        "webhook-signatures",
        "webhook-dispatcher",
        "notify-api",
        "api-gateway",
        ISSUER,
        "partner endpoints refused webhooks signed by",
        "t= (Relay-Signature timestamp)",
        "the partners' clocks",
        "webhook deliveries failing 400 at partners; retries piling up",
        "medium",
        0.36,
        0.09,
    ),
    (
        "send-triggers",
        "scheduler",
        "notify-api",
        "api-gateway",
        ISSUER,
        "refused scheduled-send triggers fired by",
        "fire_at",
        "this host's clock",
        "digest e-mails refused as fired at the wrong time",
        "medium",
        0.27,
        0.07,
    ),
    (
        "append-times",
        "event-bus",
        "analytics-ingest",
        "",
        ISSUER,
        "dropped messages stamped by",
        "LogAppendTime",
        "this host's clock",
        "events dropped outside the lateness window; dashboards flat",
        "hard",
        0.46,
        0.0,
    ),
    (
        "edge-sessions",
        "api-gateway",
        "edge-proxy",
        "",
        ISSUER,
        "refused edge session cookies signed by",
        "iat/Expires",
        "this host's clock",
        "signed-in pages bounce to the login page at the edge",
        "medium",
        0.28,
        0.0,
    ),
]

# Drifts, dealt to the rows in turn: each row is written twice, its root ahead by more than the
# 300 s signature window and behind by more than the 900 s token lifetime (a smaller lag would
# still verify), so the seed chooses the direction as well as the site.
AHEAD = (342.7, 455.1, 618.4, 391.2, 511.9)
BEHIND = (-1262.3, -1843.9, -2710.5, -1540.8, -2204.6)

# Healthy services that may log a harmless chrony warning (the chrony-noise red herring).
BYSTANDERS = (
    "search-index",
    "ledger-service",
    "media-cdn",
    "scheduler",
    "pricing-service",
    "object-store",
    "sso-bridge",
    "inventory-service",
)

SKEWABLE = sorted({row[1] for row in ROWS})
TOPOLOGY = HERE.parent / "_topologies" / "edge_platform" / "topology.toml"
SERVICES = sorted(s["name"] for s in tomllib.loads(TOPOLOGY.read_text("utf-8"))["services"])
"""Every service of the platform: each has a clock."""


def _key(service: str) -> str:
    return service.replace("-", "_")


def tables() -> list[dict[str, object]]:
    """The fault axis, two tables per row (its root ahead, then behind)."""
    out = []
    for n, row in enumerate(ROWS):
        for drift in (AHEAD[n % len(AHEAD)], BEHIND[(n * 3) % len(BEHIND)]):
            out.append(_table(n, row, drift))
    return out


def _offsets(n: int, drift: float, root: str, bystander: str) -> dict[str, float]:
    """Every service's clock offset for one structure.

    The root's drift; milliseconds elsewhere (where chrony keeps healthy hosts); a few seconds
    on the bystander, within every tolerance.
    """
    rng = random.Random(f"clock:{n}:{drift}")
    out = {s: round(rng.uniform(-0.004, 0.004), 4) for s in SERVICES}
    out[bystander] = round(rng.choice((-1, 1)) * rng.uniform(1.5, 3.5), 2)
    out[root] = drift
    return out


def _table(n: int, row: tuple[Any, ...], drift: float) -> dict[str, object]:
    """One structure: row `n`'s root drifted by `drift` seconds."""
    key, root, observer, edge, shape, refusal, claim, ref_clock, effect, difficulty, oe, ee = row
    bystander = next(
        b for b in BYSTANDERS[n % len(BYSTANDERS) :] + BYSTANDERS if b not in (root, observer, edge)
    )
    offsets = _offsets(n, drift, root, bystander)
    effects: dict[str, dict[str, float]] = {observer: {"error_rate": oe, "p99_ms": 40}}
    if edge:
        effects[edge] = {"error_rate": ee}
    return {
        "key": f"{key}/{'ahead' if drift > 0 else 'behind'}",
        "service": root,
        "observer": observer,
        "edge": edge,
        "issuer": shape == ISSUER,
        "server": shape == SERVER,
        "refusal": refusal,
        "claim": claim,
        "ref_clock": ref_clock,
        "effect": effect,
        "bystander": bystander,
        "difficulty": difficulty,
        "symptoms": [observer, *([edge] if edge else [])],
        "effects": effects,
        "offset": drift,
        "signed": f"{drift:+}",
        "size": str(round(abs(drift))),
        "relation": "ahead of" if drift > 0 else "behind",
        "verdict": "not yet valid" if drift > 0 else "already expired",
        "bystander_offset": f"{offsets[bystander]:+}",
        "observer_offset": f"{offsets[observer]:+}",
        "clock": {_key(s): v for s, v in offsets.items()},
    }


def axes() -> str:
    """The main axis, then every service's clock read from it."""
    lines = ["# Every service's clock, from the seed's table (see the module docstring)."]
    for service in SERVICES:
        lines += [
            "[[services]]",
            f'name = "{service}"',
            f'clock_offset_seconds = "{{{{fault.clock.{_key(service)}}}}}"',
        ]
    return fault_axis(tables()) + "\n" + "\n".join(lines) + "\n"
