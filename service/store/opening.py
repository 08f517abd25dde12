"""Which store a `--store` names, and opening it: a SQLite file's path or a PostgreSQL URL.

`postgresql://...` (or `postgres://...`) is a PostgreSQL database, anything else a SQLite file.
The PostgreSQL store needs the `postgres` extra (psycopg); it is imported only when one is named,
so a server on SQLite never loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..config import is_store_url
from ..core.errors import StoreError
from .contract import Store, StoreHold
from .lock import StoreLock
from .sqlite import TrajectoryStore


def open_store(where: str | Path, *, create: bool = True) -> Store:
    """The store `where` names, opened (its schema made or brought up to date).

    Args:
        where: A PostgreSQL URL, or the path of a SQLite file.
        create: Make the store where there is none (False: refuse a database without one; a
            SQLite file is made regardless: callers check that it exists first).

    Raises:
        StoreError: the store cannot be opened; the message says why.
    """
    if is_store_url(where):
        try:
            from .postgres import PostgresStore
        except ImportError as exc:
            raise _needs_driver(exc) from exc
        return PostgresStore(str(where), create=create)
    return TrajectoryStore(Path(where))


def hold_store(
    where: str | Path,
    *,
    wait: float = 0.0,
    on_wait: Callable[[str], None] | None = None,
    slot: int | None = None,
) -> StoreHold:
    """Claim the store `where` names for one server (see `StoreLock`, `PostgresLock`).

    A shard's `slot` claims only that slot of a PostgreSQL store the fleet shares; a SQLite
    file has one server whatever the slot (each shard has its own file).

    Raises:
        StoreInUseError: another server holds it after `wait` seconds.
        StoreError: the claim cannot be made (a read-only folder, an unreachable database).
    """
    if is_store_url(where):
        try:
            from .postgres import PostgresLock
        except ImportError as exc:
            raise _needs_driver(exc) from exc
        return PostgresLock(str(where), wait=wait, on_wait=on_wait, slot=slot)
    return StoreLock(Path(where), wait=wait, on_wait=on_wait)


def describe_store(where: str | Path) -> str:
    """`where` for people and logs: a URL loses its password."""
    if is_store_url(where):
        try:
            from .postgres import redact
        except ImportError:
            return "postgresql://(a URL; the driver to read it is not installed)"
        return redact(str(where))
    return str(where)


def _needs_driver(exc: ImportError) -> StoreError:
    return StoreError(
        "a postgresql:// store needs the PostgreSQL driver (psycopg 3): "
        f"pip install 'metasre[postgres]' ({exc})"
    )
