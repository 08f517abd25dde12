"""The PostgreSQL store's schema, its version, and the steps that bring an older one up to date.

`metasre_schema` holds one row: the version the database's tables are at. `MIGRATIONS[i]` takes
a database from version i to i + 1 (version 0: no store yet), so opening a store runs the steps
it lacks, in order, each in the transaction that records its new version. A transaction-scoped
advisory lock makes servers that open one database at the same moment take turns: the first
migrates, the others find it done. A database at a version above `len(MIGRATIONS)` was made by
a newer metasre and is refused rather than misread.

Steps are only ever appended: a released step never changes (a database already past it would
never run the new text).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from ..core.errors import StoreError

LOCK_CLASS = 0x6D657461
"""The first key of the store's advisory locks ('meta'); the second says which lock."""
MIGRATING = 1
"""The second key of the lock held while the schema is read and brought up to date."""
SERVING = 2
"""The second key of the lock a server holds on the store for its life (`PostgresLock`)."""
SHARD_SERVING = 1000
"""Plus a shard's slot: the second key of the lock each shard of a fleet holds on the store it
shares with the others (`metasre serve --workers`)."""

V1 = """
CREATE TABLE sessions (
    session_id  TEXT PRIMARY KEY,
    scenario_id TEXT NOT NULL,
    seed        BIGINT NOT NULL,
    config      TEXT NOT NULL,
    created_at  DOUBLE PRECISION NOT NULL,
    closed_at   DOUBLE PRECISION
);
CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions(session_id),
    sequence   BIGINT NOT NULL,
    episode    BIGINT NOT NULL,
    tick       BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    payload    TEXT NOT NULL,
    PRIMARY KEY (session_id, sequence)
);
CREATE TABLE requests (
    request_key TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(session_id),
    fingerprint TEXT NOT NULL
);
CREATE TABLE probes (
    id         INTEGER PRIMARY KEY,
    checked_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX sessions_open ON sessions (created_at, session_id) WHERE closed_at IS NULL;
"""
"""The tables of the SQLite store, column for column. JSON is kept as text, not jsonb: jsonb
refuses the escaped NUL (\\u0000) an agent's argument may hold, and an applied call that cannot
be stored cannot be acknowledged. The partial index finds the open sessions a restarted server
rebuilds without reading every session a fleet ever ran."""

MIGRATIONS: tuple[str, ...] = (V1,)
"""The steps from version 0 (no store) to the current one; see the module docstring."""


def migrate(
    conn: psycopg.Connection[Any], steps: Sequence[str], *, where: str, create: bool = True
) -> int:
    """Bring the store on `conn` up to version `len(steps)`; the version it was at.

    Args:
        conn: A connection not in autocommit mode; committed on return.
        steps: The migrations (`MIGRATIONS`; tests pass their own).
        where: The store, for messages.
        create: Make the store in a database that has none; False refuses such a database.

    Raises:
        StoreError: no store and `create` False; a newer schema; a step failed (nothing of it
            is kept) or the database cannot be reached.
    """
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, MIGRATING))
            cur.execute("SELECT to_regclass('metasre_schema') IS NOT NULL")
            row = cur.fetchone()
            if row is None or not row[0]:
                if not create:
                    raise StoreError(
                        f"the database at {where} holds no trajectory store (no metasre_schema "
                        "table): point --store at the database a metasre serve records into"
                    )
                cur.execute("CREATE TABLE metasre_schema (version INTEGER NOT NULL)")
                cur.execute("INSERT INTO metasre_schema VALUES (0)")
            cur.execute("SELECT version FROM metasre_schema")
            found = cur.fetchone()
            version = 0 if found is None else int(found[0])
            if version > len(steps):
                raise StoreError(
                    f"the store at {where} has schema version {version}, made by a newer "
                    f"metasre (this one knows versions up to {len(steps)}): upgrade metasre, "
                    "or point --store at another database"
                )
            for number in range(version, len(steps)):
                cur.execute(steps[number].encode())
                cur.execute("UPDATE metasre_schema SET version = %s", (number + 1,))
        conn.commit()
    except psycopg.Error as exc:
        conn.rollback()
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"cannot open the store at {where}: {first}") from exc
    except BaseException:
        conn.rollback()
        raise
    return version
