"""The postgres adapter of the event store, for the async ingest worker.

Every call borrows one connection of a bounded pool (config.POOL_SIZE per replica) and gives it
back on every path: through pooled(), an async context manager that releases in finally.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol

from capi_pipeline import config
from capi_pipeline.normalize import ConversionEvent
from capi_pipeline.store import INSERT_EVENT_SQL

SELECT_EVENT = "SELECT event_id, event_time FROM conversion_events WHERE event_id = $1"
COUNT_FOR_CLICK = "SELECT count(*) AS n FROM conversion_events WHERE click_id = $1"
PURGE_BEFORE = "DELETE FROM conversion_events WHERE event_time < $1"


class PoolExhausted(RuntimeError):
    """Raised when no pooled connection frees up before the acquire timeout."""


class RetentionError(ValueError):
    """Raised when a purge would delete conversions still inside the retention period."""


class Connection(Protocol):
    """The part of the driver's connection the store uses."""

    async def fetch_one(self, query: str, *args: Any) -> dict[str, Any] | None: ...

    async def execute(self, query: str, *args: Any) -> int: ...


class Pool(Protocol):
    """A pool of connections: what is acquired must be released exactly once."""

    async def acquire(self) -> Connection: ...

    async def release(self, conn: Connection) -> None: ...


@asynccontextmanager
async def pooled(pool: Pool) -> AsyncIterator[Connection]:
    """Borrow a connection for the body of an `async with`, and always give it back."""
    conn = await pool.acquire()
    try:
        yield conn
    finally:
        await pool.release(conn)


def _row(event: ConversionEvent) -> tuple[Any, ...]:
    return (event.event_id, event.event_name, event.event_time, event.click_id,
            event.value_micros, event.currency)


class PostgresEventStore:
    """conversion_events in postgres, for the async ingest worker."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def insert_event(self, event: ConversionEvent) -> bool:
        """Store one event; False when the advertiser retried an event already stored."""
        async with pooled(self._pool) as conn:
            if await conn.fetch_one(SELECT_EVENT, event.event_id) is not None:
                return False
            await conn.execute(INSERT_EVENT_SQL, *_row(event))
            return True

    async def insert_batch(self, events: Sequence[ConversionEvent]) -> int:
        """Store a batch on one connection; how many events were new."""
        async with pooled(self._pool) as conn:
            inserted = 0
            for event in events:
                inserted += await conn.execute(INSERT_EVENT_SQL, *_row(event))
            return inserted

    async def count_for_click(self, click_id: str) -> int:
        """How many stored conversions name `click_id` (the attribution job's lookup)."""
        async with pooled(self._pool) as conn:
            row = await conn.fetch_one(COUNT_FOR_CLICK, click_id)
        return int(row["n"]) if row is not None else 0

    async def purge_before(self, cutoff: int, now: int) -> int:
        """Delete conversions older than `cutoff` (epoch seconds); how many went.

        Raises:
            RetentionError: `cutoff` is inside the retention period (config.RETENTION_DAYS).
        """
        async with pooled(self._pool) as conn:
            if cutoff > now - config.RETENTION_DAYS * 86400:
                raise RetentionError(
                    f"purge cutoff {cutoff} is inside the {config.RETENTION_DAYS}-day retention"
                )
            return await conn.execute(PURGE_BEFORE, cutoff)
