"""parallel-sla's axes `a`, `b`, `c` and the `[[services]]` entries their knobs need.

Three independent faults at once on the edge platform, one in each third that an on-call role
owns, each needing a few looks and a slow remedy (a rollback takes 3 simulated minutes, a
certificate renewal or a cache warm-up 2). Axis `a` is a bad release in the commerce third (it
pages P1: the primary fault, the one the report names); axes `b` (media) and `c` (identity and
notifications) are a bad release, an expired certificate or a cold cache (P2 pages). The SLA
is shorter than the remedies alone take one after another: one responder doing everything in
sequence misses it, three working side by side (under SIMULTANEOUS a round costs its longest
call) meet it. Run after changing a site:

    python -m tools.families regenerate parallel_sla
"""

# ruff: noqa: E501  # the sites hold whole log lines

from __future__ import annotations

from ..authoring import toml_tables
from ..edge_faults import (
    Table,
    certificate,
    cold_cache,
    release,
    service_entries,
    with_service_fields,
)

RELEASED = [
    "catalog-api",
    "pricing-service",
    "inventory-service",
    "checkout-api",
    "payments-service",
    "bank-gateway",
    "ledger-service",
    "search-api",
]


def commerce_sites() -> list[Table]:
    """Axis a: a bad release of a commerce service, three ways for each (24 tables)."""
    return [
        release(service, mechanism, step, difficulty)
        for service in RELEASED
        for step, (mechanism, difficulty) in enumerate(
            [("env", "easy"), ("image", "easy"), ("arch", "medium")]
        )
    ]


def media_sites() -> list[Table]:
    """Axis b: the media third (8 tables)."""
    return with_service_fields(
        [
            release("media-api", "env", 0, "medium"),
            release("url-signer", "image", 1, "medium"),
            release("transcoder", "arch", 2, "medium"),
            release("media-cdn", "env", 1, "medium"),
            certificate("media-api", "ingress", "media-api.relay.internal", 12, "medium"),
            certificate(
                "media-cdn", "origin-client", "media-cdn.clients.relay.internal", 19, "hard"
            ),
            cold_cache(
                "media-cdn",
                "cache miss storm: cache is cold after the edge node replacement, 96% of segment requests go to the origin",
                "hard",
            ),
            cold_cache(
                "url-signer",
                "signing key cache is cold: every request fetches its key from the vault (cache stampede, p99 up 40x)",
                "hard",
            ),
        ]
    )


def identity_sites() -> list[Table]:
    """Axis c: the identity and notifications third (8 tables)."""
    return with_service_fields(
        [
            release("notify-api", "image", 0, "medium"),
            release("webhook-dispatcher", "env", 1, "medium"),
            release("accounts-api", "arch", 2, "medium"),
            release("scheduler", "image", 1, "medium"),
            certificate("sso-bridge", "saml-signing", "sso.relay.example", 27, "hard"),
            certificate("accounts-api", "ingress", "accounts-api.relay.internal", 16, "medium"),
            cold_cache(
                "accounts-api",
                "profile cache is cold after the failover: cache miss storm on every profile read",
                "hard",
            ),
            cold_cache(
                "notify-api",
                "template cache is cold after the restart of its cache nodes (thundering herd on the template store)",
                "hard",
            ),
        ]
    )


def axes() -> str:
    """Each axis's `[[services]]` entries (the knobs its sites need), then the axes' tables."""
    axes = [("a", commerce_sites()), ("b", media_sites()), ("c", identity_sites())]
    entries = "\n".join(service_entries(axis, sites) for axis, sites in axes)
    tables = "\n".join(toml_tables(f"[[variants.{axis}]]", sites) for axis, sites in axes)
    return entries + "\n" + tables
