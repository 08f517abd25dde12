"""Peak-load test of capi_pipeline's postgres event store: new events, advertiser retries,
batches (empty ones too), per-click counts and purges, some of them failing the way a statement
timeout does, against a bounded pool of 12; every connection comes back.

The fakes are deterministic: an event or click id "slow-..." or a purge cutoff of -1 fails the
statement, and a waiting acquire() gives up after MAX_WAIT_TURNS loop turns.
"""

import asyncio

from capi_pipeline import ConversionEvent
from capi_pipeline import pg_store
from capi_pipeline.store import INSERT_EVENT_SQL

POOL_SIZE = 12
MAX_WAIT_TURNS = 200
NOW = 1_717_000_000


class StatementTimeout(RuntimeError):
    """What the driver raises when postgres cancels a statement."""


class FakeConnection:
    def __init__(self, rows):
        self.rows = rows

    async def fetch_one(self, query, *args):
        await asyncio.sleep(0)
        if str(args[0]).startswith("slow-"):
            raise StatementTimeout("canceling statement due to statement timeout")
        if query == pg_store.SELECT_EVENT:
            return {"event_id": args[0]} if args[0] in self.rows else None
        return {"n": sum(1 for r in self.rows.values() if r[3] == args[0])}

    async def execute(self, query, *args):
        await asyncio.sleep(0)
        if str(args[0]).startswith("slow-") or args[0] == -1:
            raise StatementTimeout("canceling statement due to statement timeout")
        if query == INSERT_EVENT_SQL:
            new = args[0] not in self.rows
            self.rows.setdefault(args[0], args)
            return int(new)
        old = [k for k, r in self.rows.items() if r[2] < args[0]]
        for k in old:
            del self.rows[k]
        return len(old)


class BoundedFakePool:
    def __init__(self, size, rows):
        self.idle = [FakeConnection(rows) for _ in range(size)]
        self.size, self.in_use, self.exhausted = size, 0, 0

    async def acquire(self):
        for _ in range(MAX_WAIT_TURNS):
            if self.idle:
                self.in_use += 1
                return self.idle.pop()
            await asyncio.sleep(0)
        self.exhausted += 1
        raise pg_store.PoolExhausted(f"timeout acquiring connection: {self.in_use}/{self.size}")

    async def release(self, conn):
        self.in_use -= 1
        self.idle.append(conn)


def _event(event_id, click="clk-1", days_ago=1):
    return ConversionEvent(event_id, "Purchase", NOW - days_ago * 86400, click, 1_000_000, "USD")


def test_event_store_under_load_gives_every_connection_back():
    async def run():
        pool = BoundedFakePool(POOL_SIZE, {})
        store = pg_store.PostgresEventStore(pool)
        calls = []
        for i in range(320):
            kind = i % 8
            if kind == 0:
                calls.append(store.insert_event(_event(f"e-{i}")))
            elif kind == 1:
                calls.append(store.insert_event(_event("e-0")))
            elif kind == 2:
                calls.append(store.insert_event(_event(f"slow-{i}")))
            elif kind == 3:
                calls.append(store.insert_batch([] if i % 16 == 3 else [_event(f"slow-{i}")]))
            elif kind == 4:
                calls.append(store.count_for_click("clk-1"))
            elif kind == 5:
                calls.append(store.count_for_click(f"slow-{i}"))
            elif kind == 6:
                calls.append(store.purge_before(NOW - 3 * 86400, NOW))
            else:
                calls.append(store.purge_before(-1, NOW))
        results = await asyncio.gather(*calls, return_exceptions=True)
        return pool, results

    pool, results = asyncio.run(run())
    unexpected = [r for r in results if isinstance(r, BaseException)
                  and not isinstance(r, (StatementTimeout, pg_store.RetentionError))]
    assert not unexpected, (
        f"{len(unexpected)} calls failed, {pool.exhausted} could not get a connection (pool of"
        f" {pool.size}, {pool.in_use} still checked out); first: {unexpected[0]!r}"
    )
    assert pool.in_use == 0, (
        f"{pool.in_use} connections still checked out after every call finished: a code path"
        " acquires without releasing"
    )
