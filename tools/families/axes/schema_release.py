"""Writes schema-release's `[[variants.fault]]` tables (the end of scenario.toml).

The family's main axis is (table, how the migration that shipped with its writer's release
rejects the writer's rows): eight tables the marketplace's services write, on catalog-db or
orders-db, each with three constraints a migration can add (a NOT NULL column without a
default, a CHECK, a FOREIGN KEY to a table not yet filled; and for some a UNIQUE key). Each
table also holds the decoy: a migration of the same hour on the other database, shipped with
another service's release, whose constraint rejects rows too (a batch job's, retried later)
and so makes its database log the same kind of error. Run it after changing the data below,
and commit what it writes:

    python -m tools.families regenerate schema_release
"""

from __future__ import annotations

import random
import tomllib
from typing import Any, TypedDict

from ..authoring import (
    SCENARIOS,
    toml_table,
    toml_tables,
)

HERE = SCENARIOS / "schema_release"


class Written(TypedDict):
    """A table a service writes, and the constraints a migration could add to it.

    The columns are the marketplace's schema (its migrations/ in the tree); search_documents and
    notifications are tables of the indexer and the notifier that the schema files leave out.
    """

    table: str
    db: str
    writer: str
    op: str
    """The writer's request that inserts the rows."""
    columns: str
    """The INSERT's column list, as the database logs the statement."""
    notnull: str
    """A column a migration adds NOT NULL, which the writer does not fill."""
    check: tuple[str, str]
    """(column, condition) of a CHECK the writer's rows break."""
    fk: tuple[str, str]
    """(column, referenced table) of a FOREIGN KEY to a table nobody has filled yet."""
    unique: str
    """Columns of a UNIQUE key the writer's rows repeat ('' if none fits)."""


WRITTEN: list[Written] = [
    {
        "table": "listings",
        "db": "catalog-db",
        "writer": "catalog",
        "op": "POST /v1/listings",
        "columns": "seller_id, category_id, title, status, price_cents",
        "notnull": "condition",
        "check": ("status", "status IN ('active', 'sold')"),
        "fk": ("category_id", "categories"),
        "unique": "seller_id_title",
    },
    {
        "table": "listing_images",
        "db": "catalog-db",
        "writer": "catalog",
        "op": "POST /v1/listings/{id}/images",
        "columns": "listing_id, position, url",
        "notnull": "alt_text",
        "check": ("position", "position BETWEEN 1 AND 8"),
        "fk": ("listing_id", "published_listings"),
        "unique": "",
    },
    {
        "table": "reviews",
        "db": "catalog-db",
        "writer": "reviews",
        "op": "POST /v1/listings/{id}/reviews",
        "columns": "listing_id, author_id, rating, body",
        "notnull": "order_id",
        "check": ("body", "body <> ''"),
        "fk": ("author_id", "verified_buyers"),
        "unique": "listing_id_author_id",
    },
    {
        "table": "search_documents",
        "db": "catalog-db",
        "writer": "search-indexer",
        "op": "upsert of a listing's search document",
        "columns": "listing_id, title_tsv, category_path, price_cents",
        "notnull": "locale",
        "check": ("category_path", "category_path LIKE '/%'"),
        "fk": ("listing_id", "listings_live"),
        "unique": "",
    },
    {
        "table": "orders",
        "db": "orders-db",
        "writer": "orders",
        "op": "POST /v1/orders",
        "columns": "buyer_id, seller_id, status, total_cents",
        "notnull": "currency",
        "check": ("total_cents", "total_cents >= 100"),
        "fk": ("buyer_id", "buyer_accounts"),
        "unique": "buyer_id_seller_id",
    },
    {
        "table": "order_items",
        "db": "orders-db",
        "writer": "orders",
        "op": "POST /v1/orders",
        "columns": "order_id, listing_id, qty, price_cents",
        "notnull": "tax_cents",
        "check": ("qty", "qty = 1"),
        "fk": ("listing_id", "listing_snapshots"),
        "unique": "",
    },
    {
        "table": "payouts",
        "db": "orders-db",
        "writer": "payouts",
        "op": "POST /v1/payouts/run",
        "columns": "seller_id, period_end, amount_cents, status",
        "notnull": "payout_method",
        "check": ("amount_cents", "amount_cents >= 100"),
        "fk": ("seller_id", "kyc_verified_sellers"),
        "unique": "seller_id_period_end",
    },
    {
        "table": "notifications",
        "db": "orders-db",
        "writer": "notifier",
        "op": "sending an order email",
        "columns": "order_id, recipient, template, sent_at",
        "notnull": "channel",
        "check": ("template", "template ~ '^[a-z_]+_v2$'"),
        "fk": ("template", "email_templates"),
        "unique": "order_id_template",
    },
]

VERSIONS = {
    "catalog": "v3.11.0",
    "reviews": "v1.8.2",
    "search-indexer": "v0.9.7",
    "orders": "v4.3.1",
    "payouts": "v2.0.4",
    "notifier": "v1.5.0",
}
BEHIND_STOREFRONT = {"catalog", "orders", "reviews"}
DIFFICULTY = {"notnull": "medium", "check": "hard", "fk": "medium", "unique": "hard"}


class Break(TypedDict):
    """What one migration adds, and how the database and the writer say it rejects a row."""

    slug: str
    constraint: str
    guard: str
    """The constraint as the database's schema guard names it."""
    what: str
    db_lines: list[str]
    app_error: str


def broken(w: Written, mech: str) -> Break:
    """How migration `mech` on `w`'s table rejects its writer's rows."""
    t = w["table"]
    values = ", ".join(f"${i + 1}" for i in range(w["columns"].count(",") + 1))
    insert = f"STATEMENT:  INSERT INTO {t} ({w['columns']}) VALUES ({values})"
    if mech == "notnull":
        col = w["notnull"]
        error = f'null value in column "{col}" of relation "{t}" violates not-null constraint'
        return {
            "slug": f"{t}_add_{col}_not_null",
            "constraint": f"{t}.{col} NOT NULL",
            "guard": f"not-null constraint on {t}.{col}",
            "what": f"added {t}.{col} NOT NULL without a default, and {w['writer']} does not "
            "fill it",
            "db_lines": [f"ERROR:  {error}", insert],
            "app_error": error,
        }
    if mech == "check":
        col, cond = w["check"]
        name = f"{t}_{col}_check"
        error = f'new row for relation "{t}" violates check constraint "{name}"'
        return {
            "slug": f"{t}_check_{col}",
            "constraint": f"CHECK ({cond})",
            "guard": f"check constraint {name}",
            "what": f"added CHECK ({cond}) on {t}, which rows {w['writer']} writes break",
            "db_lines": [f"ERROR:  {error}", insert],
            "app_error": error,
        }
    if mech == "fk":
        col, ref = w["fk"]
        name = f"{t}_{col}_fkey"
        error = f'insert or update on table "{t}" violates foreign key constraint "{name}"'
        return {
            "slug": f"{t}_{col}_references_{ref}",
            "constraint": f"FOREIGN KEY ({col}) REFERENCES {ref}",
            "guard": f"foreign key {name}",
            "what": f"made {t}.{col} reference {ref}, which nobody has filled yet",
            "db_lines": [
                f"ERROR:  {error}",
                f'DETAIL:  Key ({col}) is not present in table "{ref}".',
                insert,
            ],
            "app_error": error,
        }
    cols = w["unique"]
    name = f"{t}_{cols}_key"
    error = f'duplicate key value violates unique constraint "{name}"'
    return {
        "slug": f"{t}_unique_{cols}",
        "constraint": f"UNIQUE ({cols.replace('_id_', '_id, ')})",
        "guard": f"unique key {name}",
        "what": f"added a UNIQUE key {name} that rows {w['writer']} writes repeat",
        "db_lines": [f"ERROR:  {error}", insert],
        "app_error": error,
    }


def mechanisms(w: Written) -> list[str]:
    """The constraints a migration on `w`'s table can break its writer with."""
    return ["notnull", "check", "fk", *(["unique"] if w["unique"] else [])]


def release(version: str, step: int) -> str:
    """The release after `version` that shipped a migration (`step` keeps versions apart)."""
    major, minor, _ = version.lstrip("v").split(".")
    return f"v{major}.{int(minor) + 1}.{step}"


SLOTS_HERE = (1, 3, 4, 5, 9, 10)
"""The hour's migration slots on the failing database: slot 1 is the bad one."""
SLOTS_THERE = (2, 6, 7, 8)
"""The hour's migration slots on the other database: slot 2 is the decoy."""
FIRST = 3
"""The number of the hour's first migration on either database (the topology applied 0001-0002)."""
LAG = 5
"""The most minutes the bad migration lands before the symptom starts: the house's
`herrings.LAG`, so no clock dates the culprit."""
PAGE_LAG = 3
"""The most minutes the page's "it started about" runs behind the onset (customers notice late)."""
NOISE = 48
"""Tables of the `noise` axis."""
TOPOLOGY = tomllib.loads((SCENARIOS / "_topologies" / "marketplace" / "topology.toml").read_text())
SERVICE_DATA = {s["name"]: s for s in TOPOLOGY["services"]}


def noise(rng: random.Random) -> dict[str, Any]:
    """One table of the `noise` axis, drawn apart from the fault.

    When each slot's migration and each release of the hour went out (minutes before the
    page), each migration's number (in the order they were applied on their database), when
    the symptom started and when the page says it did; and every service's baseline. The
    release train's migrate job applies the hour's ten migrations over a few minutes in no
    set order, so the bad one is neither the newest nor the highest-numbered on its database
    by rule; the symptom starts 0-LAG minutes after it, and the page dates it 0-PAGE_LAG
    minutes later still, and half the others land as near the onset. Baselines drawn per
    seed: the two databases' own would tell them apart.
    """
    newest = rng.randint(4, 16)
    slots = (*SLOTS_HERE, *SLOTS_THERE)
    # A minute each: the world lists changes of one minute in the head's order, slot 1 first,
    # which would single the bad one out.
    window = range(newest, newest + rng.randint(len(slots), 16) + 1)
    ago = {1: rng.choice(window)}
    onset = max(2, ago[1] - rng.randint(0, LAG))
    page = max(1, onset - rng.randint(0, PAGE_LAG))
    # Half the others within LAG minutes of the onset, either side, as the bad one lands (the
    # house's `near_onset`): "undo what went out when it started" meets them as often.
    near = [m for m in range(max(1, onset - LAG), onset + LAG + 1) if m != ago[1]]
    far = [m for m in window if m != ago[1] and m not in near]
    for i in slots[1:]:
        pool = near if (rng.random() < 0.5 and near) or not far else far
        ago[i] = pool.pop(rng.randrange(len(pool)))
    numbers: dict[str, str] = {}
    for group in (SLOTS_HERE, SLOTS_THERE):
        for n, i in enumerate(sorted(group, key=lambda i: -ago[i])):
            numbers[f"n{i}"] = f"{FIRST + n:04d}"
    return {
        **{f"t{i}": t for i, t in sorted(ago.items())},
        **numbers,
        **{f"r{i}": t for i, t in enumerate(rng.sample(window, 4), start=1)},
        "onset": onset,
        "page": page,
        "base": {
            ident(name): {
                "cpu": round(rng.uniform(0.12, 0.6), 2),
                "memory": round(rng.uniform(0.25, 0.68), 2),
                "error_rate": round(rng.uniform(0.0005, 0.003), 4) if "-db" not in name else 0.0,
                "p99_ms": rng.randint(40, 300) if "-db" not in name else rng.randint(5, 20),
                "queue_depth": rng.randint(2, 12),
            }
            for name in SERVICE_DATA
        },
    }


def ident(name: str) -> str:
    """A service's name as a template key."""
    return name.replace("-", "_")


def baselines() -> str:
    """Every service's baseline, read from the seed's `noise` table.

    A storefront's business figure stays its own.
    """
    out = []
    for name, data in SERVICE_DATA.items():
        base: dict[str, Any] = {
            m: f"{{{{noise.base.{ident(name)}.{m}}}}}"
            for m in ("cpu", "memory", "error_rate", "p99_ms", "queue_depth")
        }
        if "business" in data["baseline"]:
            base["business"] = data["baseline"]["business"]
        out.append(toml_table("[[services]]", {"name": name, "baseline": base}))
    return "\n".join(out)


def harmless(db: str, bad: str, writer: str, count: int, rng: random.Random) -> list[str]:
    """`count` harmless migrations of the hour on `db`, named as the bad ones are.

    Other constraints' migrations of the tables `writer` writes first (the ones that look
    right to a responder who knows which service fails), then other tables' of the same
    database: a fixed list of harmless names would be a list of what not to roll back.
    """

    def slugs(own: bool) -> list[str]:
        found = sorted(
            broken(x, m)["slug"]
            for x in WRITTEN
            if x["db"] == db and (x["writer"] == writer) == own
            for m in mechanisms(x)
            if broken(x, m)["slug"] != bad
        )
        rng.shuffle(found)
        return found

    return (slugs(True) + slugs(False))[:count]


def table(w: Written, mech: str, step: int, rng: random.Random) -> dict[str, Any]:
    """One table of the main axis."""
    b = broken(w, mech)
    db, writer = w["db"], w["writer"]
    # The decoy: a migration of the hour on the other database, with another writer's release.
    other = [x for x in WRITTEN if x["db"] != db]
    dw = rng.choice(other)
    dmech = rng.choice(mechanisms(dw))
    db2 = broken(dw, dmech)
    here = harmless(db, b["slug"], writer, len(SLOTS_HERE) - 1, rng)
    there = harmless(dw["db"], db2["slug"], dw["writer"], len(SLOTS_THERE) - 1, rng)
    good = VERSIONS[writer]
    shipped = release(good, step)
    decoy_release = release(VERSIONS[dw["writer"]], 9 - step % 5)
    # Two more releases of the train, on services that are neither writer (the storefront too).
    others = rng.sample(
        sorted(n for n in SERVICE_DATA if "-db" not in n and n not in (writer, dw["writer"])), 2
    )
    front = writer in BEHIND_STOREFRONT
    effects: dict[str, dict[str, float]] = {
        writer: {"error_rate": round(rng.uniform(0.34, 0.58), 2), "p99_ms": 180.0}
    }
    logs: list[dict[str, Any]] = [
        {"service": db, "level": "ERROR", "lines": b["db_lines"]},
        {
            "service": writer,
            "level": "ERROR",
            "lines": [
                f"{w['op']} failed: {db} rejected INSERT INTO {w['table']}: {b['app_error']}",
                f"{w['op']}: answered 500 after the insert into {w['table']} failed",
            ],
        },
    ]
    alerts = [
        {
            "service": writer,
            "metric": "error_rate",
            "above": 0.05,
            "severity": "P1",
            "summary": f"{writer} 5xx rate above 5%",
        }
    ]
    if front:
        effects["storefront"] = {"error_rate": 0.18, "p99_ms": 90.0, "business": -120.0}
        logs.append(
            {
                "service": "storefront",
                "level": "ERROR",
                "lines": [f"{w['op']} on {writer} answered 500; showing the error page"],
            }
        )
        alerts.append(
            {
                "service": "storefront",
                "metric": "error_rate",
                "above": 0.05,
                "severity": "P1",
                "summary": "storefront 5xx rate above 5%",
            }
        )
    symptoms = [writer, *(["storefront"] if front else [])]
    return {
        "key": f"{w['table']}:{mech}",
        "difficulty": DIFFICULTY[mech],
        "db": db,
        "writer": writer,
        "table": w["table"],
        "good": good,
        "shipped": shipped,
        "m1": b["slug"],
        "guard": b["guard"],
        "constraint": b["constraint"],
        "what": b["what"],
        **{f"m{i}": slug for i, slug in zip(SLOTS_HERE[1:], here, strict=True)},
        "m2": db2["slug"],
        "decoy_guard": db2["guard"],
        "decoy_table": dw["table"],
        **{f"m{i}": slug for i, slug in zip(SLOTS_THERE[1:], there, strict=True)},
        "decoy_db": dw["db"],
        "decoy_writer": dw["writer"],
        "decoy_release": decoy_release,
        "decoy_lines": db2["db_lines"],
        "o3": others[0],
        "o3_new": bump(SERVICE_DATA[others[0]]["version"], rng),
        "o4": others[1],
        "o4_new": bump(SERVICE_DATA[others[1]]["version"], rng),
        "effects": effects,
        "logs": logs,
        "alerts": alerts,
        "symptoms": symptoms,
        "front": front,
    }


def bump(version: str, rng: random.Random) -> str:
    """A harmless release after `version`."""
    major, minor, patch = version.lstrip("v").split(".")
    return f"v{major}.{minor}.{int(patch) + rng.randint(1, 3)}"


def tables() -> list[dict[str, Any]]:
    """Every table of the axis: each written table with each constraint that fits it."""
    rng = random.Random("schema-release-v2")
    out = []
    for w in WRITTEN:
        for step, mech in enumerate(mechanisms(w)):
            out.append(table(w, mech, step, rng))
    return out


def axes() -> str:
    """The main axis, the `noise` axis, and every service's baseline that reads it."""
    rng = random.Random("schema-release-v2:noise")
    return "\n".join(
        [
            baselines(),
            toml_tables("[[variants.fault]]", tables()),
            toml_tables("[[variants.noise]]", [noise(rng) for _ in range(NOISE)]),
        ]
    )
