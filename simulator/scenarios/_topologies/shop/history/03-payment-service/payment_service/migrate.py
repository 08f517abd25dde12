"""Schema migrations for payment-service: plain SQL files applied in order at startup.

Each ``migrations/NNNN_name.sql`` is applied once, in file-name order, inside its own
transaction, and recorded in ``schema_migrations``. A failing migration aborts startup:
new code on a schema it does not know would write bad payments, so the pod must not serve.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

log = logging.getLogger("payment-service")

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

CREATE_HISTORY = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
)


class Executor(Protocol):
    """What the runner needs from a database (payment_service.db.Database has it)."""

    def execute(self, sql: str, params: tuple = ()) -> list[tuple]: ...

    def transaction(self): ...


@dataclass(frozen=True)
class Migration:
    """One SQL migration file."""

    id: str
    """The file name without ``.sql``, e.g. ``0002_create_refunds``."""
    sql: str
    file: str = ""
    """Where it came from, for error messages."""


class MigrationError(Exception):
    """Raised when a migration fails; the migration was rolled back and startup must stop."""

    def __init__(self, migration: Migration, cause: Exception) -> None:
        super().__init__(f"migration {migration.id} ({migration.file}) failed: {cause}")
        self.migration = migration
        self.cause = cause


def load_migrations(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Every ``*.sql`` file in `directory`, in file-name order."""
    return [
        Migration(path.stem, path.read_text(encoding="utf-8"),
                  f"payment_service/migrations/{path.name}")
        for path in sorted(directory.glob("*.sql"))
    ]


def apply_pending(db: Executor, migrations: list[Migration] | None = None) -> list[str]:
    """Apply the migrations not yet recorded, in order; return the ids applied now.

    Raises:
        MigrationError: a migration failed. It and every later one are left unapplied.
    """
    migrations = load_migrations() if migrations is None else migrations
    db.execute(CREATE_HISTORY)
    done = {row[0] for row in db.execute("SELECT id FROM schema_migrations")}
    applied = []
    for migration in migrations:
        if migration.id in done:
            continue
        log.info("applying migration %s", migration.id)
        try:
            with db.transaction():
                db.execute(migration.sql)
                db.execute("INSERT INTO schema_migrations (id) VALUES (%s)", (migration.id,))
        except Exception as exc:
            raise MigrationError(migration, exc) from exc
        applied.append(migration.id)
    return applied
