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
from typing import Any, TypedDict

from ..authoring import (
    SCENARIOS,
    healthy_check,
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
COMPANIONS = {
    # Harmless migrations of the hour on each database, applied before the bad one.
    "catalog-db": ["create_seller_badges", "reviews_add_helpful_count", "create_listing_flags"],
    "orders-db": ["create_order_notes", "shipments_add_eta", "create_refund_requests"],
}
DIFFICULTY = {"notnull": "medium", "check": "hard", "fk": "medium", "unique": "hard"}


class Break(TypedDict):
    """What one migration adds, and how the database and the writer say it rejects a row."""

    slug: str
    constraint: str
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


def table(w: Written, mech: str, step: int, rng: random.Random) -> dict[str, Any]:
    """One table of the main axis."""
    b = broken(w, mech)
    db, writer = w["db"], w["writer"]
    bad = f"0004_{b['slug']}"
    companion = f"0003_{rng.choice(COMPANIONS[db])}"
    # The decoy: a migration of the hour on the other database, with another writer's release.
    other = [x for x in WRITTEN if x["db"] != db]
    dw = rng.choice(other)
    dmech = rng.choice(mechanisms(dw))
    db2 = broken(dw, dmech)
    decoy = f"0003_{db2['slug']}"
    good = VERSIONS[writer]
    shipped = release(good, step)
    decoy_release = release(VERSIONS[dw["writer"]], 9 - step % 5)
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
        "bad": bad,
        "constraint": b["constraint"],
        "what": b["what"],
        "companion": companion,
        "decoy": decoy,
        "decoy_db": dw["db"],
        "decoy_writer": dw["writer"],
        "decoy_release": decoy_release,
        "decoy_lines": db2["db_lines"],
        "effects": effects,
        "logs": logs,
        "alerts": alerts,
        "symptoms": symptoms,
        "state_checks": [
            {
                "name": f"{bad} rolled back",
                "kind": "migration_absent",
                "service": db,
                "migration": bad,
            },
            *(healthy_check(s) for s in symptoms),
        ],
    }


def tables() -> list[dict[str, Any]]:
    """Every table of the axis: each written table with each constraint that fits it."""
    rng = random.Random("schema-release")
    out = []
    for w in WRITTEN:
        for step, mech in enumerate(mechanisms(w)):
            out.append(table(w, mech, step, rng))
    return out


def axes() -> str:
    """The main axis."""
    return toml_tables("[[variants.fault]]", tables())
