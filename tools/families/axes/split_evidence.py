"""Writes split-evidence's `[[variants.site]]` tables (the end of scenario.toml).

The family's main axis is (caller, callee, how the callee's release broke the contract the
caller relies on): every edge between two Python services of the courier platform, each with
two of three mechanisms (a route removed, a request field renamed, an API version dropped).
Each table also holds what must agree with it: the two decoy releases of the hour (other
services that shipped the same kind of change and log the same kind of warning, for callers
that do not matter), the platform's shape around them, the evidence, the alerts, the roles'
views (the release train's three services for the release captain, every other service for
the on-call) and the checks. Run it after changing the data below, and commit what it writes:

    python -m tools.families regenerate split_evidence
"""

from __future__ import annotations

import random
from typing import Any

from ..authoring import (
    BARE_DASHED_KEYS,
    SCENARIOS,
    deployed_check,
    healthy_check,
    toml_table,
    toml_tables,
    wrong_fix,
)
from ..courier import OPS, gateway_alert, shape
from ..courier_platform import (
    BY_NAME,
    SERVICES,
    app_deps,
    upstream,
)

HERE = SCENARIOS / "split_evidence"

FIELDS = {
    # callee: (the request field its new release renamed, the new name)
    "orders-api": ("delivery_address_id", "dropoff_id"),
    "catalog-api": ("city_code", "market"),
    "accounts-api": ("session_token", "session"),
    "courier-api": ("courier_id", "rider_id"),
    "ratings-service": ("order_ref", "order_id"),
    "pricing-service": ("zone_id", "zone"),
    "payments-service": ("amount", "amount_minor"),
    "dispatch-service": ("pickup_eta_s", "pickup_eta"),
    "notify-service": ("template", "template_id"),
    "identity-service": ("jwt", "token"),
    "ledger-service": ("account", "account_id"),
    "fraud-service": ("device_fp", "device_fingerprint"),
    "geo-service": ("latlng", "point"),
    "eta-service": ("route_points", "polyline"),
    "menu-service": ("restaurant", "restaurant_id"),
    "search-service": ("q", "query"),
    "promo-service": ("code", "promo_code"),
    "push-relay": ("device_token", "push_token"),
}

MECHANISMS = ("route", "field", "api-version")
DIFFICULTY = {"route": "medium", "field": "hard", "api-version": "medium"}
OLD_API, NEW_API = "2024-04-01", "2025-06-01"


def _v2(op: str) -> str:
    method, _, path = op.partition(" ")
    return f"{method} {path.replace('/v1/', '/v2/', 1)}"


def warning(service: str, version: str, mech: str) -> str:
    """What a service logs when callers still use what its release `version` removed.

    The decoys log it too, word for word in form: from the callee's side alone, nobody can tell
    which caller it breaks, or whether it breaks anything.
    """
    op = OPS[service]
    if mech == "route":
        return (
            f"{op} does not exist in {service} {version} (moved to {_v2(op)}); "
            "answered 410 Gone to a caller still on the old route"
        )
    if mech == "field":
        old, new = FIELDS[service]
        return (
            f"rejected {op}: request field '{old}' does not exist in the {version} schema "
            f"(renamed to '{new}'); answered 400 Bad Request"
        )
    return (
        f"rejected {op}: API version {OLD_API} does not exist in {service} {version} "
        f"(it serves {NEW_API} only); answered 400 Bad Request"
    )


def caller_errors(caller: str, callee: str, mech: str) -> list[str]:
    """The caller's errors: they name the callee and what it rejected."""
    op = OPS[callee]
    if mech == "route":
        said = f"{op} on {callee} answered 410 Gone: route does not exist"
    elif mech == "field":
        said = (
            f"{op} on {callee} answered 400 Bad Request: request field "
            f"'{FIELDS[callee][0]}' does not exist"
        )
    else:
        said = f"{op} on {callee} answered 400 Bad Request: API version {OLD_API} does not exist"
    return [said, f"giving up on {op} after 3 attempts; {callee} rejects every call the same way"]


def bumped(version: str, step: int) -> str:
    """A later release than `version`: the minor raised by `step` (patch `step % 2`)."""
    major, minor, _ = version.lstrip("v").split(".")
    return f"v{major}.{int(minor) + 1 + step // 2}.{step % 2}"


TRAIN = (7, 9)
"""How many services this hour's release train shipped, the callee among them: a shallow pick
among them at chance stays under validate's bar."""
WINDOW = (9, 14)
"""Minutes the train takes to roll out, newest release to oldest (a release a minute at most)."""
LAG = 5
"""The most minutes the callee's release lands before the symptom starts (pods roll over, caches
expire): the house's `herrings.LAG`, so no clock dates the culprit."""
PAGE_LAG = 3
"""The most minutes the page's "it started about" runs behind the onset (customers notice late)."""


def train(caller: str, callee: str, rng: random.Random) -> list[str]:
    """The release train's other services: the decoys, sorted.

    First the callee's neighbours, which look right to a responder who reads only the page: the
    caller's other dependencies (its failure could come from any of them) and the callee's own;
    then others. Never the caller or its callers: they alert, and a train service's log is the
    release captain's, who must not see the failure.
    """
    everyone = {s.name for s in SERVICES}
    hot = {caller, *upstream(caller, everyone)}
    pool = sorted(
        s.name
        for s in SERVICES
        if s.code and s.name in OPS and s.name != callee and s.name not in hot
    )
    siblings = [d for d in app_deps(BY_NAME[caller]) if d in pool]
    below = [d for d in app_deps(BY_NAME[callee]) if d in pool and d not in siblings]
    rng.shuffle(siblings)
    rng.shuffle(below)
    size = rng.randint(*TRAIN) - 1
    decoys = (siblings + below)[:size]
    rest = [s for s in pool if s not in decoys]
    rng.shuffle(rest)
    return sorted(decoys + rest[: size - len(decoys)])


SLOTS = TRAIN[1]
"""Release slots of the head: slot 1 is the callee's, slots 2.. the other services'."""

NOISE = 48
"""Tables of the `noise` axis: when the train rolled out and how busy each service runs."""


def noise(rng: random.Random) -> dict[str, Any]:
    """One table of the `noise` axis, drawn apart from the site.

    When each slot's release went out (minutes before the page), when the symptom started and
    when the page says it did; and every Python service's baseline. The train rolls out over
    a few minutes in no set order, so the callee's release (slot 1) is neither the newest nor
    the oldest by rule; the symptom starts 0-LAG minutes after it, and the page dates it
    0-PAGE_LAG minutes later still: "undo what went out when it started" meets the train's
    other releases as often as the bad one. Baselines drawn per seed, not the platform's own:
    a service's own would rank the callees the platform's graph makes common (geo-service, the
    hottest and fullest Python service, is the callee of four callers) above the rest of the
    train, whatever the train.
    """
    newest = rng.randint(4, 16)
    # A minute each: the world lists changes of one minute in the head's order, slot 1 first,
    # which would single the bad one out.
    ago = rng.sample(range(newest, newest + rng.randint(*WINDOW) + 1), SLOTS)
    onset = max(2, ago[0] - rng.randint(0, LAG))
    page = max(1, onset - rng.randint(0, PAGE_LAG))
    python = [x for x in SERVICES if x.code]
    return {
        **{f"t{i + 1}": t for i, t in enumerate(ago)},
        "onset": onset,
        "page": page,
        "cpu": {x.ident: round(rng.uniform(0.12, 0.6), 2) for x in python},
        "memory": {x.ident: round(rng.uniform(0.25, 0.68), 2) for x in python},
        "error_rate": {x.ident: round(rng.uniform(0.0005, 0.003), 4) for x in python},
        "p99_ms": {x.ident: rng.randint(40, 340) for x in python},
        "queue_depth": {x.ident: rng.randint(2, 20) for x in python},
    }


def baselines() -> str:
    """Every Python service's baseline, read from the seed's `noise` table."""
    out = []
    for x in SERVICES:
        if x.code:
            base = {m: f"{{{{noise.{m}.{x.ident}}}}}" for m in x.baseline}
            out.append(toml_table("[[services]]", {"name": x.name, "baseline": base}))
    return "\n".join(out)


def site(caller: str, callee: str, mech: str, step: int, rng: random.Random) -> dict[str, Any]:
    """One table of the main axis."""
    good = BY_NAME[callee].version
    bad = bumped(good, step)
    decoys = train(caller, callee, rng)
    on, present = shape([caller, callee, *decoys], rng)
    above = upstream(caller, present)[:4]
    effects: dict[str, dict[str, float]] = {
        caller: {"error_rate": round(rng.uniform(0.32, 0.55), 2), "p99_ms": 240.0}
    }
    for depth, u in enumerate(above):
        effects[u] = {"error_rate": round(max(0.08, 0.3 - 0.08 * depth), 2), "p99_ms": 120.0}
    logs: list[dict[str, Any]] = [
        {"service": callee, "level": "WARN", "lines": [warning(callee, bad, mech)]},
        {"service": caller, "level": "ERROR", "lines": caller_errors(caller, callee, mech)},
    ]
    for u in above:
        hop = next(d for d in BY_NAME[u].deps if d == caller or d in above)
        logs.append(
            {
                "service": u,
                "level": "ERROR",
                "lines": [f"{OPS[hop]} on {hop} answered 502: it failed upstream"],
            }
        )
    # The train's other services in slots 2.., in an order of their own (slot times are drawn
    # apart from the site): each with its release and its warning.
    shuffled = list(decoys)
    rng.shuffle(shuffled)
    slots: dict[str, Any] = {"s1": callee}
    for i in range(2, SLOTS + 1):
        d = shuffled[i - 2] if i - 2 < len(shuffled) else ""
        new = bumped(BY_NAME[d].version, rng.randrange(4)) if d else ""
        slots |= {
            f"s{i}": d,
            f"v{i}": new,
            f"w{i}": [warning(d, new, rng.choice(MECHANISMS))] if d else [],
        }
    alerts = [
        {
            "service": caller,
            "metric": "error_rate",
            "above": 0.05,
            "severity": "P1",
            "summary": f"{caller} 5xx rate above 5%",
        },
        *([] if caller == "edge-gateway" else gateway_alert(caller)),
    ]
    # The views split the platform in two: the release train's services, and the rest.
    # Neither names the failing caller, so knowing a teammate's view gives nothing away.
    app_view = sorted(present - {callee, *decoys})
    symptoms = [caller, *above]
    wrong = slots["s2"]
    return {
        "key": f"{caller}>{callee}:{mech}",
        "on": on,
        "difficulty": DIFFICULTY[mech],
        "service": callee,
        "caller": caller,
        "mechanism": mech,
        "good": good,
        "bad": bad,
        **slots,
        "decoys": decoys,
        "what": _what(callee, caller, mech),
        "effects": effects,
        "logs": logs,
        "alerts": alerts,
        "symptoms": symptoms,
        "app_view": app_view,
        "deploy_view": sorted([callee, *decoys]),
        "state_checks": [
            deployed_check(callee, good),
            *(healthy_check(s) for s in symptoms),
        ],
        "wrong": wrong_fix(
            "rollback_deployment",
            {"service": wrong},
            wrong,
            "bad_deployment",
            f"{wrong} {slots['v2']} went out this hour and rejects old calls; rolled it back.",
        ),
    }


def _what(callee: str, caller: str, mech: str) -> str:
    op = OPS[callee]
    if mech == "route":
        return f"moved {op} to {_v2(op)}, and {caller} still calls the old route"
    if mech == "field":
        old, new = FIELDS[callee]
        return (
            f"renamed the request field '{old}' of {op} to '{new}', "
            f"and {caller} still sends '{old}'"
        )
    return f"dropped API version {OLD_API} of {op}, and {caller} still pins it"


def tables() -> list[dict[str, Any]]:
    """Every table of the axis: each edge between Python services with two mechanisms."""
    rng = random.Random("split-evidence-v2")
    out = []
    seen: dict[str, int] = {}
    for s in SERVICES:
        if not s.code:
            continue
        for callee in app_deps(s):
            for mech in rng.sample(MECHANISMS, 2):
                step = seen.get(callee, 0)
                seen[callee] = step + 1
                out.append(site(s.name, callee, mech, step, rng))
    return out


def axes() -> str:
    """The `site` and `noise` axes, and the Python services' baselines that read `noise`."""
    rng = random.Random("split-evidence-v2:noise")
    return "\n".join(
        [
            baselines(),
            toml_tables("[[variants.site]]", tables(), BARE_DASHED_KEYS),
            toml_tables("[[variants.noise]]", [noise(rng) for _ in range(NOISE)]),
        ]
    )
