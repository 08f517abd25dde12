"""twin-faults' axes `a`, `b` and `noise`, and the `[[services]]` entries they need.

Two independent faults at once on the edge platform, in two halves that two on-call roles own:
axis `a` breaks a commerce service (it pages P1: the primary fault, the one the report names),
axis `b` a platform service (a P2 page). Each comes from causes of several kinds: a bad
release (a required environment variable never set, an image tag never pushed, an arm64-only
image), an expired certificate, a drifted clock, a bad config push, a feature flag, a cold cache.

Symptom-first (issue 25): what pages is never the root. Each root sits behind a caller in its
own half; the caller fails, alerts and names the root in its log, while the root itself stays
green on the dashboard (requests that never reach a pod that never starts, or fail at the
handshake, are not its errors). The commerce half ships a release train this hour (6-8
harmless releases a minute apart in no set order, the caller's other dependencies first, and
the bad release among them when the cause is one), and harmless config pushes and flag ramps
that borrow the culprits' keys and features; a `noise` axis, drawn apart from `a` (the split
axis), holds the times and every service's baseline, so no dashboard rank names a root. Run
after changing a site:

    python -m tools.families regenerate twin_faults
"""

# ruff: noqa: E501  # the sites hold whole log lines

from __future__ import annotations

import random

from ..authoring import toml_tables
from ..edge_faults import (
    NOISE,
    RELEASABLE,
    Table,
    certificate,
    clock,
    cold_cache,
    config,
    flag,
    noise,
    release,
    release_train,
    symptom_entries,
    symptom_first,
    with_service_fields,
)

PUSHED = {
    # a culprit's config key: services that push it harmlessly, with (before, after)
    "quote.ttl_s": (["catalog-api", "checkout-api", "search-api"], 300, 600),
    "partner.timeout_ms": (["notify-api", "media-api", "payments-service"], 5000, 8000),
    "object_store.endpoint": (
        ["media-cdn", "media-api", "search-api"],
        "objects.relay.internal",
        "objects-eu.relay.internal",
    ),
}
"""Harmless config pushes borrow the culprits' keys, on services where they are harmless."""

FEATURES = {
    # a culprit flag's feature: its owner (the one service whose flag of it breaks)
    "signed_payloads_v2": "webhook-dispatcher",
    "batched_leases": "scheduler",
    "reservations_v2": "inventory-service",
    "three_ds_v2": "payments-service",
}
"""Flags are named `<owner>.<feature>`; harmless ones pair a culprit's feature with another owner."""


def harmless_config() -> dict[str, Table]:
    """Each service's settings before the harmless pushes of PUSHED change them."""
    out: dict[str, Table] = {}
    for key, (services, before, _after) in PUSHED.items():
        for service in services:
            out.setdefault(service, {})[key] = before
    return out


def _flag_name(owner: str, feature: str) -> str:
    return f"{owner.replace('-', '_')}.{feature}"


def commerce_sites() -> list[Table]:
    """Axis a: the commerce half, each root behind a commerce caller (21 tables)."""
    sites = [
        release(service, mechanism, step, difficulty)
        for service in [
            "pricing-service",
            "inventory-service",
            "payments-service",
            "bank-gateway",
            "ledger-service",
        ]
        for step, (mechanism, difficulty) in enumerate(
            [("env", "medium"), ("image", "medium"), ("arch", "hard")]
        )
    ]
    sites += [
        certificate(
            "bank-gateway", "acquirer-mtls", "acquirer.bank-gateway.relay.internal", 14, "hard"
        ),
        config(
            "pricing-service",
            "quote.ttl_s",
            300,
            0,
            "every quote expires as it is signed and checkout rejects it",
            "hard",
        ),
        flag(
            "inventory-service",
            _flag_name("inventory-service", "reservations_v2"),
            "KeyError 'warehouse_id' building the v2 reservation",
            "medium",
        ),
        flag(
            "payments-service",
            _flag_name("payments-service", "three_ds_v2"),
            "TypeError: challenge_url is None on the 3-D Secure v2 path",
            "medium",
        ),
        clock(
            "ledger-service",
            -140.0,
            "journal entries rejected: clock is behind by 140s, entry timestamps fall before the period lock (NTP unsynchronised)",
            "hard",
        ),
        cold_cache(
            "pricing-service",
            "promotion rules cache is cold after the failover: every quote recomputes its rules (cache miss storm)",
            "hard",
        ),
    ]
    return sites


def platform_sites() -> list[Table]:
    """Axis b: the platform half, each root behind a platform caller (11 tables)."""
    return [
        certificate("url-signer", "ingress", "url-signer.relay.internal", 18, "medium"),
        certificate("transcoder", "ingress", "transcoder.relay.internal", 22, "medium"),
        certificate("object-store", "ingress", "objects.relay.internal", 31, "hard"),
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
            "transcoder",
            160.0,
            "object store refuses the upload signatures: RequestTimeTooSkewed, clock is ahead by 160s (chronyd stopped)",
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
            "transcoder",
            "object_store.endpoint",
            "objects.relay.internal",
            "objects.staging.relay.internal",
            "segment uploads go to the staging bucket and are refused (403)",
            "hard",
        ),
        flag(
            "webhook-dispatcher",
            _flag_name("webhook-dispatcher", "signed_payloads_v2"),
            "TypeError signing the payload: secret for partner 'acme' is None",
            "medium",
        ),
        flag(
            "scheduler",
            _flag_name("scheduler", "batched_leases"),
            "ValueError: lease batch of 0 jobs on the batched path",
            "medium",
        ),
        cold_cache(
            "url-signer",
            "signing key cache is cold: every request fetches its key from the vault (cache stampede, p99 up 40x)",
            "hard",
        ),
    ]


def train(site: Table, rng: random.Random) -> Table:
    """The release train of a table of axis a, and this hour's harmless pushes and flags."""
    out = release_train(site, rng)
    # Two harmless config pushes of the culprits' keys, and two flags of the culprits' features.
    keys = rng.sample(sorted(PUSHED), 2)
    for i, key in enumerate(keys, start=1):
        services, _before, after = PUSHED[key]
        out |= {f"hs{i}": rng.choice(services), f"hk{i}": key, f"hv{i}": after}
    features = rng.sample(sorted(FEATURES), 2)
    for i, feature in enumerate(features, start=1):
        owner = rng.choice([s for s in RELEASABLE if s != FEATURES[feature]])
        out |= {
            f"fs{i}": owner,
            f"fn{i}": _flag_name(owner, feature),
            f"fr{i}": rng.choice([25, 50, 100]),
        }
    return out


def axes() -> str:
    """The `[[services]]` entries, then the `a`, `b` and `noise` axes' tables."""
    rng = random.Random("twin-faults-v2")
    a = [symptom_first(s, rng) for s in commerce_sites()]
    a = with_service_fields([{**s, **train(s, rng)} for s in a])
    b = with_service_fields([symptom_first(s, rng) for s in platform_sites()])
    noise_rng = random.Random("twin-faults-v2:noise")
    return "\n".join(
        [
            symptom_entries([("a", a), ("b", b)], harmless_config()),
            toml_tables("[[variants.a]]", a),
            toml_tables("[[variants.b]]", b),
            toml_tables("[[variants.noise]]", [noise(noise_rng) for _ in range(NOISE)]),
        ]
    )
