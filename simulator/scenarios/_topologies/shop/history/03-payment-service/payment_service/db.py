"""Postgres access for payment-service: a thin wrapper over a psycopg 3 connection.

psycopg is imported only in :meth:`Database.connect`, so the package and its tests import
without the driver.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator


class Database:
    """Runs statements on one connection; `transaction()` groups them atomically."""

    def __init__(self, connection: Any) -> None:
        self._conn = connection

    @classmethod
    def connect(cls, url: str) -> "Database":
        import psycopg  # only in the container image

        return cls(psycopg.connect(url, autocommit=True))

    def execute(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Run one statement; return its rows (empty for statements without a result)."""
        with self._conn.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

    @contextmanager
    def transaction(self) -> Iterator["Database"]:
        """Commit everything executed inside the block, or nothing if it raises."""
        with self._conn.transaction():
            yield self
