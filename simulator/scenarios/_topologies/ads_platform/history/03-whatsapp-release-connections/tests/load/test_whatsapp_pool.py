"""Peak-load test: 200 concurrent webhook and profile requests through the real handlers
against a bounded pool of 10 connections.

The fake pool is deterministic: a waiting acquire() retries once per event-loop turn and
gives up with PoolExhausted after MAX_WAIT_TURNS turns, so a connection that is never given
back shows up as exhausted acquires, not as a slow test.
"""

import asyncio

from whatsapp_sync import MessageRepository, PoolExhausted, SyncApi
from whatsapp_sync import repository

POOL_SIZE = 10
MAX_WAIT_TURNS = 200
REQUESTS = 200
USERS = {
    f"u-{i}": {
        "user_id": f"u-{i}", "display_name": f"Shop {i}", "phone": f"+1 555 010 {i:04d}",
        "email": f"owner{i}@shop{i}.example", "locale": "en_US", "opted_in": True,
    }
    for i in range(20)
}


class FakeConnection:
    """Serves the repository's queries from shared dicts; one loop turn per query, like I/O."""

    def __init__(self, db):
        self.db = db

    async def fetch_one(self, query, *args):
        await asyncio.sleep(0)
        table = self.db["users"] if query == repository.SELECT_USER else self.db["messages"]
        return dict(table[args[0]]) if args[0] in table else None

    async def execute(self, query, *args):
        await asyncio.sleep(0)
        if query == repository.INSERT_MESSAGE:
            self.db["messages"][args[0]] = {"message_id": args[0], "status": "received"}
        else:
            self.db["messages"][args[0]]["status"] = args[1]
        return 1


class BoundedFakePool:
    """At most `size` connections out at once; acquire waits a bounded number of turns."""

    def __init__(self, size, db):
        self.idle = [FakeConnection(db) for _ in range(size)]
        self.size = size
        self.in_use = 0
        self.peak = 0
        self.exhausted = 0

    async def acquire(self):
        for _ in range(MAX_WAIT_TURNS):
            if self.idle:
                self.in_use += 1
                self.peak = max(self.peak, self.in_use)
                return self.idle.pop()
            await asyncio.sleep(0)
        self.exhausted += 1
        raise PoolExhausted(f"timeout acquiring connection: {self.in_use}/{self.size} in use")

    async def release(self, conn):
        self.in_use -= 1
        self.idle.append(conn)


def _requests(api):
    """A peak-hour mix: new messages, WhatsApp redeliveries, status updates (some for
    messages we never stored, some repeated) and profile reads."""
    calls = []
    for i in range(REQUESTS):
        user = f"u-{i % 20}"
        kind = i % 5
        if kind == 0:
            calls.append(api.inbound_webhook({"message_id": f"m-{i}", "from": user,
                                              "timestamp": i}))
        elif kind == 1:
            calls.append(api.inbound_webhook({"message_id": "m-seed-1", "from": user,
                                              "timestamp": i}))
        elif kind == 2:
            calls.append(api.status_webhook({"message_id": "m-seed-2", "status": "delivered",
                                             "timestamp": i}))
        elif kind == 3:
            calls.append(api.status_webhook({"message_id": f"m-missing-{i}", "status": "read",
                                             "timestamp": i}))
        else:
            calls.append(api.get_profile(user if i % 3 else "u-unknown"))
    return calls


async def _run_peak():
    db = {"users": USERS, "messages": {
        "m-seed-1": {"message_id": "m-seed-1", "status": "received"},
        "m-seed-2": {"message_id": "m-seed-2", "status": "delivered"},
    }}
    pool = BoundedFakePool(POOL_SIZE, db)
    api = SyncApi(MessageRepository(pool))
    results = await asyncio.gather(*_requests(api), return_exceptions=True)
    return pool, results


def test_peak_load_never_exhausts_the_pool():
    pool, results = asyncio.run(_run_peak())
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, (
        f"{len(errors)}/{REQUESTS} requests failed, {pool.exhausted} could not get a connection"
        f" (pool of {pool.size}, {pool.in_use} still checked out); first error: {errors[0]!r}"
    )
    assert pool.peak == POOL_SIZE, f"expected the load to use the whole pool, peak {pool.peak}"


def test_every_connection_is_returned_after_peak():
    pool, _ = asyncio.run(_run_peak())
    assert pool.in_use == 0, (
        f"{pool.in_use} connections still checked out after all requests finished: a code path"
        " acquires without releasing"
    )


def test_responses_under_load_are_correct():
    _, results = asyncio.run(_run_peak())
    statuses = sorted({r["status"] for r in results if isinstance(r, dict)})
    assert statuses == [200, 404], statuses
    not_found = sum(1 for r in results if isinstance(r, dict) and r["status"] == 404)
    assert not_found == 40 + 13, f"expected 53 not-found answers, got {not_found}"
