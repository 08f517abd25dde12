"""Writes the `[[variants.fault]]` tables of consumer-lag's scenario.toml.

The family's main axis is (queue, why its consumer fell behind): a poison message at the head
of the queue (the consumer's handler raises on it at every redelivery: skip it), a produce
rate several times the usual with too few consumers (scale the consumer), or a release that
made the handler slow (roll it back). The poison tables' stack traces are real: this script
runs each consumer's handler on the queue's poison payload against the marketplace
topology's code and records the innermost frame. Run it after changing a handler or the data:

    python -m tools.families regenerate consumer_lag
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any, TypedDict

from ..authoring import (
    SCENARIOS,
    deployed_check,
    fault_axis,
    healthy_check,
    log,
)

HERE = SCENARIOS / "consumer_lag"


class Queue(TypedDict):
    """One marketplace queue and the consumer that falls behind on it."""

    queue: str
    service: str
    """The consumer."""
    replicas: int
    rate: int
    """Messages a second at the usual produce rate."""
    module: str
    """The handler's module, in the marketplace topology's code."""
    call: str
    """The handler call one message makes (`message` is the payload)."""
    poison: dict[str, object]
    """A payload a producer bug put on the queue, which the handler raises on."""
    producer: str
    good: str
    slow: str
    """The release that breaks the handler."""
    column: str
    """The column that release reads and the schema does not have yet."""
    feature: str
    behind: str
    """What falls behind for people."""


class Frame(TypedDict):
    """The innermost frame of a handler's traceback and the exception it raised."""

    file: str
    line: int
    func: str
    code: str
    error: str


# The marketplace's queues: consumer, replicas, handler, the call one message makes, a poison
# payload (what a producer bug put on the queue), the release that would slow the handler, and
# what falls behind for people.
QUEUES: list[Queue] = [
    {
        "queue": "order-events",
        "service": "notifier",
        "replicas": 2,
        "rate": 140,
        "module": "notifier.consumer",
        "call": "emails_for(message)",
        "poison": {
            "order_id": 99120,
            "kind": "order.placed",
            "seller_email": "s-4412@sellers.test",
        },
        "producer": "orders",
        "good": "v1.5.0",
        "slow": "v1.5.1",
        "column": "orders.gift_note",
        "feature": "order e-mails now include the buyer's gift note",
        "behind": "order confirmation e-mails arriving late",
    },
    {
        "queue": "review-events",
        "service": "notifier",
        "replicas": 2,
        "rate": 30,
        "module": "notifier.consumer",
        "call": "emails_for(message)",
        "poison": {
            "kind": "order.delivered",
            "buyer_email": "b-9@buyers.test",
            "seller_email": "s-2@sellers.test",
        },
        "producer": "reviews",
        "good": "v1.5.0",
        "slow": "v1.6.0",
        "column": "reviews.seller_reply",
        "feature": "review e-mails now quote the seller's reply",
        "behind": "review requests and review notifications not going out",
    },
    {
        "queue": "listing-changes",
        "service": "search-indexer",
        "replicas": 2,
        "rate": 220,
        "module": "search_indexer.documents",
        "call": "document_for(message)",
        "poison": {
            "id": 774201,
            "status": "active",
            "title": None,
            "price_cents": 4500,
            "category_id": 12,
        },
        "producer": "catalog",
        "good": "v0.9.7",
        "slow": "v0.9.8",
        "column": "listings.condition_grade",
        "feature": "search documents now carry the condition grade",
        "behind": "new and edited listings missing from search",
    },
    {
        "queue": "price-changes",
        "service": "search-indexer",
        "replicas": 2,
        "rate": 90,
        "module": "search_indexer.documents",
        "call": "document_for(message)",
        "poison": {"id": 88104, "status": "active", "title": "Walnut side table", "category_id": 4},
        "producer": "catalog",
        "good": "v0.9.7",
        "slow": "v0.10.0",
        "column": "listings.price_floor_cents",
        "feature": "price updates now index the seller's price floor",
        "behind": "search showing stale prices",
    },
    {
        "queue": "delivery-events",
        "service": "payouts",
        "replicas": 2,
        "rate": 60,
        "module": "payouts.consumer",
        "call": "book_delivery(message, {})",
        "poison": {
            "seller_id": 4431,
            "delivered_on": "2026-03-02",
            "iso_week": "10",
            "total_cents": 12900,
        },
        "producer": "orders",
        "good": "v2.0.4",
        "slow": "v2.0.5",
        "column": "payouts.currency",
        "feature": "bookings now record the payout currency",
        "behind": "seller balances not updated for delivered orders",
    },
    {
        "queue": "refund-events",
        "service": "payouts",
        "replicas": 2,
        "rate": 15,
        "module": "payouts.consumer",
        "call": "book_refund(message, {})",
        "poison": {
            "seller_id": 4431,
            "refunded_on": "2026-03-03",
            "iso_week": 10,
            "amount_cents": "12.90",
        },
        "producer": "orders",
        "good": "v2.0.4",
        "slow": "v2.0.5",
        "column": "payouts.refund_reason",
        "feature": "refund bookings now record the refund reason",
        "behind": "refunds not deducted from seller balances",
    },
    {
        "queue": "payment-results",
        "service": "orders",
        "replicas": 4,
        "rate": 180,
        "module": "orders.consumer",
        "call": "apply_payment_result('pending', message)",
        "poison": {"order_id": 5520931, "result": "captured", "psp_reference": "pi_3Nf2"},
        "producer": "the payment provider webhook relay",
        "good": "v4.3.1",
        "slow": "v4.3.2",
        "column": "orders.psp_fee_cents",
        "feature": "payment results now store the provider's fee",
        "behind": "paid orders stuck in pending",
    },
    {
        "queue": "shipment-updates",
        "service": "orders",
        "replicas": 4,
        "rate": 160,
        "module": "orders.consumer",
        "call": "apply_shipment_update('paid', message)",
        "poison": {"order_id": 5520117, "tracking_no": "1Z999AA10123456784", "scan": None},
        "producer": "the carrier webhook relay",
        "good": "v4.3.1",
        "slow": "v4.3.2",
        "column": "shipments.last_scan_location",
        "feature": "carrier scans now store the scan location",
        "behind": "orders not moving to shipped and delivered",
    },
    {
        "queue": "image-processed",
        "service": "catalog",
        "replicas": 4,
        "rate": 120,
        "module": "catalog.consumer",
        "call": "attach_image([{'position': 0, 'url': 'a.jpg'}], message)",
        "poison": {
            "listing_id": 774190,
            "position": None,
            "url": "https://img.market.test/774190/x.jpg",
        },
        "producer": "the image pipeline",
        "good": "v3.11.0",
        "slow": "v3.11.2",
        "column": "listing_images.alt_text_generated",
        "feature": "attached images now get generated alt text",
        "behind": "listing photos not appearing after upload",
    },
    {
        "queue": "moderation-results",
        "service": "reviews",
        "replicas": 2,
        "rate": 40,
        "module": "reviews.consumer",
        "call": "visible_after(message)",
        "poison": {"review_id": 66120, "labels": None, "model": "mod-v7"},
        "producer": "the moderation service",
        "good": "v1.8.2",
        "slow": "v1.9.0",
        "column": "reviews.moderation_model",
        "feature": "moderation results now record the model version",
        "behind": "flagged reviews staying visible",
    },
    {
        "queue": "saved-search-alerts",
        "service": "notifier",
        "replicas": 2,
        "rate": 25,
        "module": "notifier.consumer",
        "call": "alert_email(message)",
        "poison": {"buyer_email": "b-771@buyers.test", "query": "oak desk", "matches": 12},
        "producer": "search-indexer's alert matcher",
        "good": "v1.5.0",
        "slow": "v1.5.1",
        "column": "saved_searches.last_sent_at",
        "feature": "alerts now record when they were sent",
        "behind": "saved-search alert e-mails not going out",
    },
    {
        "queue": "seller-changes",
        "service": "search-indexer",
        "replicas": 2,
        "rate": 12,
        "module": "search_indexer.documents",
        "call": "seller_document(message)",
        "poison": {"id": 20931, "display_name": "Casa Velha", "country": None},
        "producer": "catalog",
        "good": "v0.9.7",
        "slow": "v0.9.8",
        "column": "sellers.vat_id",
        "feature": "seller documents now carry the VAT id",
        "behind": "renamed shops not findable by their new name",
    },
    {
        "queue": "review-votes",
        "service": "reviews",
        "replicas": 2,
        "rate": 35,
        "module": "reviews.consumer",
        "call": "apply_vote({'helpful': 3}, message)",
        "poison": {"review_id": 66231, "voter_id": 9, "direction": "sideways"},
        "producer": "storefront",
        "good": "v1.8.2",
        "slow": "v1.9.0",
        "column": "reviews.helpful_count",
        "feature": "votes now update the denormalised helpful count",
        "behind": "helpful-vote counts frozen on reviews",
    },
]

# Broken releases: one per consumer service (its busiest queue shows the backlog first).
RELEASES = {
    "order-events",
    "listing-changes",
    "delivery-events",
    "payment-results",
    "image-processed",
    "moderation-results",
}

# Traffic jumps that outgrow a consumer (one per consumer service: its busiest queue).
SURGES = {
    "order-events": (4, "the spring sale campaign e-mail went out"),
    "listing-changes": (3, "a power seller's bulk import of 40,000 listings"),
    "delivery-events": (3, "the carrier back-filled two days of delivery scans"),
    "payment-results": (3, "the flash sale at 09:00"),
    "image-processed": (4, "the image pipeline re-processing every photo for the new WebP sizes"),
    "moderation-results": (5, "the moderation service re-scoring the last month of reviews"),
}

RUN = textwrap.dedent(
    """
    import json, sys, traceback
    sys.path.insert(0, sys.argv[1])
    import importlib
    module = importlib.import_module(sys.argv[2])
    message = json.loads(sys.argv[4])
    try:
        eval(sys.argv[3], vars(module), {"message": message})
    except Exception as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        error = traceback.format_exception_only(exc)[-1].strip()
        print(json.dumps({"file": frame.filename, "line": frame.lineno, "func": frame.name,
                          "code": frame.line, "error": error}))
    else:
        print("null")
    """
)


def tree() -> Path:
    """The marketplace topology's code, written out to a fresh temporary folder."""
    from metasre.simulator.history import load_history_dir
    from metasre.simulator.scenarios.loader import TOPOLOGIES_DIR

    files: dict[str, str] = {}
    load_history_dir(TOPOLOGIES_DIR / "marketplace" / "history", files=files)
    root = Path(tempfile.mkdtemp())
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def trace(root: Path, q: Queue) -> Frame:
    """Run `q`'s handler on its poison payload in the tree at `root`; where it raised."""
    out = subprocess.run(
        [sys.executable, "-c", RUN, str(root), q["module"], q["call"], json.dumps(q["poison"])],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    seen: Frame | None = json.loads(out)
    assert seen is not None, f"{q['queue']}: the poison payload does not fail"
    seen["file"] = Path(seen["file"]).resolve().relative_to(root.resolve()).as_posix()
    return seen


def message_id(n: int) -> str:
    """A message id that looks random and is the same for the same `n`."""
    return f"msg-{(n * 2654435761) % 0xFFFFFF:06x}"


def tables() -> list[dict[str, Any]]:
    """Every `[[variants.fault]]` table, in order: per queue, poison, surge, release."""
    root = tree()
    out = []
    n = 0
    for q in QUEUES:
        for mech in ("poison", "surge", "release"):
            if mech == "surge" and q["queue"] not in SURGES:
                continue
            if mech == "release" and q["queue"] not in RELEASES:
                continue
            out.append(table(root, q, mech, n))
            n += 1
    return out


def table(root: Path, q: Queue, mech: str, n: int) -> dict[str, Any]:
    """The `n`-th table: the consumer of `q` falling behind by `mech`."""
    svc, name = q["service"], q["queue"]
    head = message_id(n + 7)
    depth = 9000 + (n * 3917) % 40000
    queues: dict[str, dict[str, int | bool | str]] = {}
    for i, other in enumerate(QUEUES):
        mine = other["queue"] == name
        queues[other["queue"].replace("-", "_")] = {
            "depth": depth if mine else 3 + (n + i) % 17,
            "poison": mine and mech == "poison",
            "head": head if mine else message_id(n * 31 + i),
        }
    alerts = [
        {
            "service": svc,
            "metric": "queue_depth",
            "above": 200,
            "severity": "P1",
            "summary": f"{svc}: {name} consumer backlog above 200",
        }
    ]
    effects = {svc: {"queue_depth": 900.0}}
    if mech == "poison":
        seen = trace(root, q)
        effects[svc].update(error_rate=0.38, cpu=0.05)
        lines = [
            f"{name}: message {head} failed {180 + n * 7} times, nacked for redelivery; it is the"
            " head of the queue and nothing behind it is consumed (consumer lag"
            f" {depth} messages)",
            "Traceback (most recent call last, innermost frame):",
            f'  File "{seen["file"]}", line {seen["line"]}, in {seen["func"]}',
            f"    {seen['code']}",
            seen["error"],
        ]
        logs = [log(svc, "ERROR", *lines)]
        alerts.append(
            {
                "service": svc,
                "metric": "error_rate",
                "above": 0.05,
                "severity": "P2",
                "summary": f"{svc} handler error rate above 5%",
            }
        )
        fault = {"kind": "knob", "params": {"knob": f"queue:{name}", "poison": True}}
        location, remediation = f"queue:{name}", "skip_message"
        fix = {"tool": "skip_message", "args": {"queue": name}}
        checks = [
            {
                "name": f"{name} head no longer poison",
                "kind": "knob_ok",
                "service": svc,
                "knob": f"queue:{name}",
                "poison": True,
            }
        ]
        cause = (
            f"message {head} at the head of {name} ({seen['error']}, from {q['producer']}) fails "
            f"{svc}'s handler at {seen['file']} line {seen['line']} at every redelivery"
        )
        how = f"dead-letter the poison message with skip_message on {name}"
        page = f"{q['behind']}: {svc}'s {name} backlog is growing and its handler keeps failing"
    elif mech == "surge":
        factor, why = SURGES[name]
        required = q["replicas"] * factor
        effects[svc].update(cpu=0.6, p99_ms=400.0)
        logs = [
            log(
                svc,
                "WARN",
                f"{name}: consumer lag {depth} messages and growing; produce rate {factor}x"
                f" the usual since {why}; all {q['replicas']} replicas at 100% busy, each"
                f" handles about {q['rate'] // q['replicas']} msg/s",
            )
        ]
        fault = {"kind": "capacity", "params": {"required_replicas": required}}
        location, remediation = f"service:{svc}", "scale_service"
        fix = {"tool": "scale_service", "args": {"service": svc, "replicas": required + 1}}
        checks = [
            {
                "name": f"{svc} runs at least {required} replicas",
                "kind": "replicas_at_least",
                "service": svc,
                "replicas": required,
            }
        ]
        cause = (
            f"{why} multiplied {name}'s produce rate by {factor}; {q['replicas']} replicas of "
            f"{svc} cannot keep up (it needs {required})"
        )
        how = f"scale {svc} to at least {required} replicas"
        page = f"{q['behind']}: {svc}'s {name} backlog is growing"
    else:
        effects[svc].update(error_rate=0.41, cpu=0.08)
        logs = [
            log(
                svc,
                "ERROR",
                f"{name}: handler error on message {head}: psycopg.errors.UndefinedColumn:"
                f" column {q['column']} does not exist ({svc} {q['slow']}); message"
                f" requeued, backlog {depth}",
            )
        ]
        alerts.append(
            {
                "service": svc,
                "metric": "error_rate",
                "above": 0.05,
                "severity": "P2",
                "summary": f"{svc} handler error rate above 5%",
            }
        )
        fault = {"kind": "deployment", "params": {"bad_version": q["slow"]}}
        location, remediation = f"deployment:{svc}@{q['slow']}", "rollback_deployment"
        fix = {"tool": "rollback_deployment", "args": {"service": svc}}
        checks = [deployed_check(svc, q["good"])]
        cause = (
            f"{svc} {q['slow']} ({q['feature']}) reads column {q['column']}, which the schema "
            f"does not have yet, so its {name} handler fails on every message and the queue"
            " backs up"
        )
        how = f"roll {svc} back to {q['good']}"
        page = f"{q['behind']}: {svc}'s {name} backlog is growing"
    return {
        "key": f"{name}-{mech}",
        # The poison message names itself; a surge needs the replica count worked out; a broken
        # release pages as a backlog but is a deployment's fault.
        "difficulty": {"poison": "easy", "surge": "medium", "release": "hard"}[mech],
        "service": svc,
        "queue": name,
        "mech": mech,
        "release": mech == "release",
        "lagging": mech != "release",
        "category": "bad_deployment" if mech == "release" else "consumer_lag",
        "good": q["good"],
        "slow": q["slow"],
        "queues": queues,
        "kind": fault["kind"],
        "params": fault["params"],
        "effects": effects,
        "logs": logs,
        "alerts": alerts,
        "location": location,
        "remediation": remediation,
        "fix_tool": fix["tool"],
        "fix_args": fix["args"],
        "state_checks": [*checks, healthy_check(svc)],
        "cause": cause,
        "how": how,
        "page": page,
    }


def axes() -> str:
    """The main axis."""
    return fault_axis(tables())
