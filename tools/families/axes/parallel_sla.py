"""parallel-sla's axes `a`, `b`, `c`, `noise` and the `[[services]]` entries they need.

Three independent faults at once on the edge platform, one in each third that an on-call role
owns, each needing a few looks and a slow remedy (a rollback takes 3 simulated minutes, a
certificate renewal or a cache warm-up 2). Axis `a` is a bad release in the commerce third (it
pages P1: the primary fault, the one the report names), hidden in this hour's release train;
axes `b` (media) and `c` (notifications) are an expired certificate or a cold cache (P2
pages). The SLA is shorter than the remedies alone take one after another: one responder doing
everything in sequence misses it, three working side by side (under SIMULTANEOUS a round costs
its longest call) meet it.

Symptom-first as twin-faults (the helpers of edge_faults.py): what pages is a caller of each root in
its third, the roots stay green, and the times and baselines are drawn apart (`noise`). Run
after changing a site:

    python -m tools.families regenerate parallel_sla
"""

# ruff: noqa: E501  # the sites hold whole log lines

from __future__ import annotations

import random

from ..authoring import toml_tables
from ..edge_faults import (
    NOISE,
    Table,
    certificate,
    cold_cache,
    noise,
    release,
    release_train,
    symptom_entries,
    symptom_first,
    with_service_fields,
)

RELEASED = [
    "pricing-service",
    "inventory-service",
    "payments-service",
    "bank-gateway",
    "ledger-service",
]
"""Commerce services behind a commerce caller: the page never names the one that broke."""


def commerce_sites() -> list[Table]:
    """Axis a: a bad release of a commerce service, four ways for each (20 tables)."""
    return [
        release(service, mechanism, step, difficulty)
        for service in RELEASED
        for step, (mechanism, difficulty) in enumerate(
            [("env", "medium"), ("image", "medium"), ("arch", "hard"), ("env", "hard")]
        )
    ]


def media_sites() -> list[Table]:
    """Axis b: the media third, behind media-api or the transcoder (6 tables)."""
    return [
        certificate("url-signer", "ingress", "url-signer.relay.internal", 18, "medium"),
        certificate("transcoder", "ingress", "transcoder.relay.internal", 22, "medium"),
        certificate("object-store", "ingress", "objects.relay.internal", 31, "hard"),
        cold_cache(
            "url-signer",
            "signing key cache is cold: every request fetches its key from the vault (cache stampede, p99 up 40x)",
            "hard",
        ),
        cold_cache(
            "object-store",
            "metadata cache is cold after the node replacement: every lookup goes to the disks (cache miss storm)",
            "hard",
        ),
        cold_cache(
            "transcoder",
            "preset cache is cold after the restart: every job reloads its presets from the store (thundering herd)",
            "hard",
        ),
    ]


def notify_sites() -> list[Table]:
    """Axis c: the notifications half of the identity third, behind notify-api (6 tables)."""
    return [
        certificate("webhook-dispatcher", "partner-mtls", "hooks.relay.internal", 16, "medium"),
        certificate("scheduler", "ingress", "scheduler.relay.internal", 24, "medium"),
        certificate("event-bus", "broker-tls", "events.relay.internal", 29, "hard"),
        cold_cache(
            "webhook-dispatcher",
            "partner endpoint cache is cold after the failover: every delivery resolves its partner again (cache miss storm)",
            "hard",
        ),
        cold_cache(
            "scheduler",
            "schedule cache is cold after the restart of its cache nodes (thundering herd on the schedule store)",
            "hard",
        ),
        cold_cache(
            "event-bus",
            "topic metadata cache is cold after the broker restart: every produce looks its partitions up again",
            "hard",
        ),
    ]


def axes() -> str:
    """The `[[services]]` entries, then the `a`, `b`, `c` and `noise` axes' tables."""
    rng = random.Random("parallel-sla-v2")
    a = [symptom_first(s, rng) for s in commerce_sites()]
    a = [{**s, **release_train(s, rng)} for s in a]
    b = with_service_fields([symptom_first(s, rng) for s in media_sites()])
    c = with_service_fields([symptom_first(s, rng) for s in notify_sites()])
    noise_rng = random.Random("parallel-sla-v2:noise")
    tables = []
    for _ in range(NOISE):
        t = noise(noise_rng)
        tables.append({**t, "c_onset": noise_rng.randint(20, 46)})
    return "\n".join(
        [
            symptom_entries([("a", a), ("b", b), ("c", c)]),
            toml_tables("[[variants.a]]", a),
            toml_tables("[[variants.b]]", b),
            toml_tables("[[variants.c]]", c),
            toml_tables("[[variants.noise]]", tables),
        ]
    )
