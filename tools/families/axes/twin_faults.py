"""twin-faults' axes `a` and `b` and the `[[services]]` entries their knobs need.

Two independent faults at once on the edge platform, in two halves that two on-call roles own:
axis `a` is a bad release in the commerce half (catalog, pricing, inventory, checkout,
payments, search), which pages P1; axis `b` is a runtime fault in the platform half (identity,
media, notifications: an expired certificate, a drifted clock, a bad config push, a feature
flag), which pages P2. The primary fault, the one the report names, is the one behind the
page's first alert (most severe, then oldest): always the release. Both must be cured. Run
after changing a site:

    python -m tools.families regenerate twin_faults
"""

# ruff: noqa: E501  # the sites hold whole log lines

from __future__ import annotations

from ..authoring import toml_tables
from ..edge_faults import (
    Table,
    certificate,
    clock,
    config,
    flag,
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


def primary_sites() -> list[Table]:
    """Axis a: a bad release of a commerce service, three ways for each (24 tables)."""
    sites = []
    for service in RELEASED:
        for step, (mechanism, difficulty) in enumerate(
            [("env", "easy"), ("image", "easy"), ("arch", "medium")]
        ):
            sites.append(release(service, mechanism, step, difficulty))
    return sites


def secondary_sites() -> list[Table]:
    """Axis b: a runtime fault of a platform service (11 tables)."""
    return with_service_fields(
        [
            certificate("media-api", "ingress", "media-api.relay.internal", 12, "medium"),
            certificate(
                "media-cdn", "origin-client", "media-cdn.clients.relay.internal", 19, "medium"
            ),
            certificate("sso-bridge", "saml-signing", "sso.relay.example", 27, "hard"),
            clock(
                "url-signer",
                212.0,
                "signed URLs rejected as issued in the future: clock is ahead by 212s (NTP source unreachable since the node reboot)",
                "medium",
            ),
            clock(
                "scheduler",
                -95.0,
                "lease renewals refused: clock is behind by 95s, leases expire before they are renewed (NTP unsynchronised)",
                "hard",
            ),
            clock(
                "mfa-service",
                75.0,
                "TOTP codes rejected: clock skew of +75s against the authenticator apps (chronyd stopped)",
                "medium",
            ),
            config(
                "webhook-dispatcher",
                "partner.timeout_ms",
                5000,
                50,
                "every partner delivery times out after 50 ms",
                "easy",
            ),
            config(
                "analytics-ingest",
                "batch.max_events",
                500,
                5,
                "batches of 5 events overrun the ingest quota and are refused",
                "medium",
            ),
            config(
                "transcoder",
                "object_store.endpoint",
                "objects.relay.internal",
                "objects.staging.relay.internal",
                "segment uploads go to the staging bucket and are refused (403)",
                "hard",
            ),
            flag(
                "notify-api",
                "templated_push_v2",
                "TypeError rendering the push payload: template field 'locale' is missing",
                "easy",
            ),
            flag(
                "accounts-api",
                "profile_reads_v3",
                "KeyError 'display_name' reading the v3 profile document",
                "medium",
            ),
        ]
    )


def axes() -> str:
    """Each axis's `[[services]]` entries (the knobs its sites need), then the axes' tables."""
    axes = [("a", primary_sites()), ("b", secondary_sites())]
    entries = "\n".join(service_entries(axis, sites) for axis, sites in axes)
    tables = "\n".join(toml_tables(f"[[variants.{axis}]]", sites) for axis, sites in axes)
    return entries + "\n" + tables
