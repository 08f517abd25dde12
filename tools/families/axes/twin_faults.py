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
import tomllib

from ..authoring import TOPOLOGIES, healthy_check, toml_tables, toml_value
from ..edge_faults import (
    ROUTES,
    VERSIONS,
    Table,
    certificate,
    clock,
    cold_cache,
    config,
    flag,
    release,
)

TOPOLOGY = tomllib.loads((TOPOLOGIES / "edge_platform" / "topology.toml").read_text("utf-8"))
DEPS: dict[str, list[str]] = {s["name"]: list(s["depends_on"]) for s in TOPOLOGY["services"]}
BASELINE_KEYS = ("cpu", "memory", "error_rate", "p99_ms", "queue_depth")

CALLERS = {
    # root: the callers in its own half that fail with it (the first one pages)
    "pricing-service": ["checkout-api", "catalog-api"],
    "inventory-service": ["checkout-api"],
    "payments-service": ["checkout-api"],
    "bank-gateway": ["payments-service"],
    "ledger-service": ["payments-service"],
    "object-store": ["transcoder", "media-cdn"],
    "event-bus": ["notify-api", "webhook-dispatcher", "scheduler"],
    "url-signer": ["media-api", "media-cdn"],
    "transcoder": ["media-api"],
    "webhook-dispatcher": ["notify-api"],
    "scheduler": ["notify-api"],
}
"""Every root has a caller in its own half: what pages is in the view of the role that fixes."""

EDGE = {"catalog-api", "checkout-api", "search-api"}
"""The commerce services the gateway calls: the commerce fault reaches the edge through one."""

ROUTE = {
    **ROUTES,
    "object-store": "PUT /objects",
    "event-bus": "produce notifications.outbound",
}

TRAIN = (6, 8)
"""Harmless releases this hour (the bad one, when the cause is a release, is one more)."""
SLOTS = TRAIN[1]

RELEASABLE = sorted(VERSIONS)
"""Services a release train can ship: the ones with a release line (edge_faults.VERSIONS)."""

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


def _flag_name(owner: str, feature: str) -> str:
    return f"{owner.replace('-', '_')}.{feature}"


def _caller_line(site: Table, caller: str) -> str:
    """What a caller logs: it names the root and the route; the root's own log tells why."""
    root, route = site["service"], ROUTE[site["service"]]
    if site["category"] == "bad_deployment":
        return f"{root} has no ready endpoints: {route} answered 503; failing the call"
    if site["category"] == "expired_certificate":
        return f"{route} on {root} failed: TLS handshake with {root} refused; failing the call"
    return f"{route} on {root} answered 502 for 40% of calls; failing the call"


def symptom_first(site: Table, rng: random.Random) -> Table:
    """`site` with the root green and its callers paging: the callers' effects and blame.

    The root keeps its own log (the words of its failure, the evidence of its kind); its
    callers fail and name it; the commerce fault reaches the gateway through a caller it calls.
    """
    root = site["service"]
    callers = CALLERS[root]
    effects: Table = {}
    logs = [log for log in site["logs"] if log["service"] == root]
    for caller in callers:
        effects[caller] = {"error_rate": round(rng.uniform(0.26, 0.48), 2)}
        logs.append({"service": caller, "level": "ERROR", "lines": [_caller_line(site, caller)]})
    edge = ""
    if root in {"bank-gateway", "ledger-service"}:
        effects["checkout-api"] = {"error_rate": round(rng.uniform(0.12, 0.22), 2)}
        logs.append(
            {
                "service": "checkout-api",
                "level": "ERROR",
                "lines": [
                    "POST /payments/capture on payments-service answered 502: it failed upstream"
                ],
            }
        )
        edge = "checkout-api"
    elif callers[0] in EDGE:
        edge = callers[0]
    if edge:
        effects["api-gateway"] = {"error_rate": round(rng.uniform(0.08, 0.14), 2)}
        logs.append(
            {
                "service": "api-gateway",
                "level": "ERROR",
                "lines": [f"upstream answered 503 on the commerce routes: {edge} is failing"],
            }
        )
    return {
        **site,
        "effects": effects,
        "logs": logs,
        "terminal": [],
        "caller": callers[0],
        # The root stays green: what must recover is the caller that paged.
        "healthy": healthy_check(callers[0]),
    }


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


def _bumped(version: str, rng: random.Random) -> tuple[str, str]:
    """A harmless release of a service on `version`: (the one before it, the new one)."""
    major, minor, patch = (int(x) for x in version.lstrip("v").split("."))
    minor += rng.randint(0, 3)
    return f"v{major}.{minor}.{patch + 1}", f"v{major}.{minor}.{patch + 2}"


def train(site: Table, rng: random.Random) -> Table:
    """The release train, the harmless pushes and flags of a table of axis a.

    The train's services: first the failing caller's other dependencies (what a responder who
    reads the page would suspect), then others; never the root when its release is the cause
    (its one release is the bad one).
    """
    root, caller = site["service"], site["caller"]
    pool = [s for s in RELEASABLE if not (site["release"] and s == root)]
    near = [d for d in DEPS[caller] if d in pool and d != root]
    rng.shuffle(near)
    rest = [s for s in pool if s not in near]
    rng.shuffle(rest)
    size = rng.randint(*TRAIN)
    chosen = (near + rest)[:size]
    rng.shuffle(chosen)
    out: Table = {}
    for i in range(SLOTS):
        svc = chosen[i] if i < len(chosen) else ""
        prev, new = _bumped(VERSIONS[svc], rng) if svc else ("", "")
        out |= {f"r{i + 1}": svc, f"rp{i + 1}": prev, f"rv{i + 1}": new}
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


NOISE = 48
"""Tables of the `noise` axis: when things went out, and how busy each service runs."""

LAG, PAGE_LAG = 5, 3
"""The most minutes between the commerce cause and its symptom, and between that and the page."""


def noise(rng: random.Random) -> Table:
    """One table of the `noise` axis, drawn apart from the sites.

    The train's releases, a harmless push and a harmless flag land a minute apart or more over
    11-16 minutes, in no set order; the commerce cause (slot `t0`) among them, its symptom 0-LAG
    minutes later, the page 0-PAGE_LAG minutes later still. The platform fault's change (a
    push or a flag, when it is one) lands further back, as do the other harmless push and
    flag, so neither the oldest nor the newest change of a kind is the cause by rule. Baselines are drawn per seed (a service's own would rank it the
    same every seed).
    """
    newest = rng.randint(3, 12)
    # t0 (the commerce cause), t1-t8 (the train), u1 and u3 (a push and a flag) near the
    # symptom; u2 and u4 (a push and a flag) back where the platform fault began.
    ago = rng.sample(range(newest, newest + rng.randint(11, 16) + 1), SLOTS + 3)
    onset = max(2, ago[0] - rng.randint(0, LAG))
    page = max(1, onset - rng.randint(0, PAGE_LAG))
    b_change, u2, u4 = rng.sample(range(max(ago) + 2, 47), 3)
    out: Table = {
        "t0": ago[0],
        **{f"t{i + 1}": t for i, t in enumerate(ago[1 : SLOTS + 1])},
        "u1": ago[SLOTS + 1],
        "u3": ago[SLOTS + 2],
        "u2": u2,
        "u4": u4,
        "onset": onset,
        "page": page,
        "b_change": b_change,
        "b_onset": b_change - rng.randint(0, 3),
        "good": rng.choice([2880, 4320, 5760]),
    }
    for metric, (lo, hi) in {
        "cpu": (0.1, 0.6),
        "memory": (0.2, 0.68),
        "error_rate": (0.0, 0.003),
        "p99_ms": (5, 300),
        "queue_depth": (1, 12),
    }.items():
        out[metric] = {
            _ident(s["name"]): (
                rng.randint(lo, hi) if isinstance(lo, int) else round(rng.uniform(lo, hi), 4)
            )
            for s in TOPOLOGY["services"]
        }
    return out


def _ident(service: str) -> str:
    return service.replace("-", "_")


def _knob_fields(sites: list[Table]) -> list[Table]:
    """Each table with one field per service whose clock or cache some table moves."""
    clocks = sorted({s["service"] for s in sites if s["clock"]})
    caches = sorted({s["service"] for s in sites if not s["cache_warm"]})
    out = []
    for site in sites:
        fields = {
            f"clock__{_ident(c)}": site["clock"] if site["service"] == c else 0.0 for c in clocks
        }
        fields |= {
            f"cache__{_ident(c)}": site["cache_warm"] or site["service"] != c for c in caches
        }
        out.append({**site, **fields})
    return out


def service_entries(axes: list[tuple[str, list[Table]]]) -> str:
    """One `[[services]]` entry per service: its seed's baseline and the knobs the sites move."""
    blocks = []
    for s in TOPOLOGY["services"]:
        name = s["name"]
        cfg: Table = {}
        for key, (services, before, _after) in PUSHED.items():
            if name in services:
                cfg[key] = before
        lines = [f'name = "{name}"']
        for axis, sites in axes:
            mine = [x for x in sites if x["service"] == name]
            for x in mine:
                cfg |= x["config"]
            if any(x["clock"] for x in mine):
                lines.append(f'clock_offset_seconds = "{{{{{axis}.clock__{_ident(name)}}}}}"')
            if any(not x["cache_warm"] for x in mine):
                lines.append(f'cache_warm = "{{{{{axis}.cache__{_ident(name)}}}}}"')
        if cfg:
            lines.insert(1, f"config = {toml_value(cfg)}")
        base = {k: f"{{{{noise.{k}.{_ident(name)}}}}}" for k in BASELINE_KEYS}
        blocks.append("[[services]]\n" + "\n".join(lines) + f"\nbaseline = {toml_value(base)}\n")
    return "\n".join(blocks)


def axes() -> str:
    """The `[[services]]` entries, then the `a`, `b` and `noise` axes' tables."""
    rng = random.Random("twin-faults-v2")
    a = [symptom_first(s, rng) for s in commerce_sites()]
    a = _knob_fields([{**s, **train(s, rng)} for s in a])
    b = _knob_fields([symptom_first(s, rng) for s in platform_sites()])
    noise_rng = random.Random("twin-faults-v2:noise")
    return "\n".join(
        [
            service_entries([("a", a), ("b", b)]),
            toml_tables("[[variants.a]]", a),
            toml_tables("[[variants.b]]", b),
            toml_tables("[[variants.noise]]", [noise(noise_rng) for _ in range(NOISE)]),
        ]
    )
