"""Grader checks for meta-sre/db-connection-leak-v1 (never shown to agents).

FAIL_TO_PASS: every repository call gives its pooled connection back, on every path (found,
not found, duplicate, unknown message) and when a query raises; a peak-hour mix through the
real handlers against a bounded pool of {{pool.size}} never exhausts it. PASS_TO_PASS: what the
repository and the API answer is unchanged, the pool is still bounded, profiles still masked.
"""

import asyncio

from whatsapp_sync import ConnectionPool, MessageRepository, PoolExhausted, SyncApi, UnknownMessage
from whatsapp_sync import repository

POOL_SIZE = {{pool.size}}
USER = {"user_id": "u-1", "display_name": "Padaria Sol", "phone": "+55 11 91234 5678",
        "email": "caixa@padariasol.example", "locale": "pt_BR", "opted_in": True}


class Conn:
    """Serves the repository's queries from dicts; one event-loop turn per query."""

    def __init__(self, db, fail=False):
        self.db, self.fail = db, fail

    async def fetch_one(self, query, *args):
        await asyncio.sleep(0)
        if self.fail:
            raise RuntimeError("canceling statement due to statement timeout")
        table = self.db["users"] if query == repository.SELECT_USER else self.db["messages"]
        row = table.get(args[0])
        return dict(row) if row is not None else None

    async def execute(self, query, *args):
        await asyncio.sleep(0)
        if self.fail:
            raise RuntimeError("canceling statement due to statement timeout")
        if query == repository.INSERT_MESSAGE:
            self.db["messages"][args[0]] = {"message_id": args[0], "status": "received"}
        elif query == repository.UPDATE_STATUS:
            self.db["messages"][args[0]]["status"] = args[1]
        else:
            raise AssertionError(f"unexpected query {query!r}")
        return 1


class CountingPool:
    """Unbounded; counts what is checked out, and refuses a double release."""

    def __init__(self, db, fail=False):
        self.db, self.fail, self.out = db, fail, 0

    async def acquire(self):
        self.out += 1
        return Conn(self.db, self.fail)

    async def release(self, conn):
        assert self.out > 0, "a connection was released twice"
        self.out -= 1


class BoundedPool:
    """At most `size` connections out; a waiting acquire gives up after 300 loop turns."""

    def __init__(self, size, db):
        self.idle = [Conn(db) for _ in range(size)]
        self.size, self.in_use, self.exhausted = size, 0, 0

    async def acquire(self):
        for _ in range(300):
            if self.idle:
                self.in_use += 1
                return self.idle.pop()
            await asyncio.sleep(0)
        self.exhausted += 1
        raise PoolExhausted(f"timeout acquiring connection: {self.in_use}/{self.size} in use")

    async def release(self, conn):
        self.in_use -= 1
        self.idle.append(conn)


def _db():
    return {"users": {"u-1": dict(USER)},
            "messages": {"m-1": {"message_id": "m-1", "status": "delivered"}}}


# --- FAIL_TO_PASS -------------------------------------------------------------------------


def test_every_repository_path_gives_its_connection_back():
    async def scenario():
        pool = CountingPool(_db())
        repo = MessageRepository(pool)
        steps = [
            ("get_user found", repo.get_user("u-1")),
            ("get_user not found", repo.get_user("u-404")),
            ("save_inbound new", repo.save_inbound("m-2", "u-1", "oi", 10)),
            ("save_inbound redelivered", repo.save_inbound("m-2", "u-1", "oi", 11)),
            ("update_status changed", repo.update_status("m-1", "read", 12)),
            ("update_status repeated", repo.update_status("m-1", "read", 13)),
        ]
        for name, call in steps:
            await call
            assert pool.out == 0, f"{name}: {pool.out} connection(s) not given back to the pool"
        try:
            await repo.update_status("m-404", "read", 14)
        except UnknownMessage:
            pass
        assert pool.out == 0, "update_status of an unknown message kept its connection"

    asyncio.run(scenario())


def test_connection_given_back_when_a_query_fails():
    async def scenario():
        pool = CountingPool(_db(), fail=True)
        repo = MessageRepository(pool)
        calls = {
            "get_user": lambda: repo.get_user("u-1"),
            "save_inbound": lambda: repo.save_inbound("m-9", "u-1", "oi", 1),
            "update_status": lambda: repo.update_status("m-1", "read", 2),
        }
        for name, call in calls.items():
            try:
                await call()
            except RuntimeError:
                pass
            else:
                raise AssertionError(f"{name} swallowed a failed query")
            assert pool.out == 0, f"{name}: a failed query kept its connection"

    asyncio.run(scenario())


def test_evening_peak_never_exhausts_the_pool():
    async def scenario():
        db = _db()
        db["messages"]["m-seed"] = {"message_id": "m-seed", "status": "received"}
        pool = BoundedPool(POOL_SIZE, db)
        api = SyncApi(MessageRepository(pool))
        calls = []
        for i in range(720):
            kind = i % 6
            if kind == 0:
                calls.append(api.inbound_webhook({"message_id": f"n-{i}", "from": "u-1",
                                                  "timestamp": i}))
            elif kind == 1:
                calls.append(api.inbound_webhook({"message_id": "m-seed", "from": "u-1",
                                                  "timestamp": i}))
            elif kind == 2:
                calls.append(api.status_webhook({"message_id": "m-1", "status": "delivered",
                                                 "timestamp": i}))
            elif kind == 3:
                calls.append(api.status_webhook({"message_id": f"gone-{i}", "status": "read",
                                                 "timestamp": i}))
            elif kind == 4:
                calls.append(api.get_profile("u-1"))
            else:
                calls.append(api.get_profile(f"u-gone-{i}"))
        results = await asyncio.gather(*calls, return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        assert not errors, (f"{len(errors)} of {len(calls)} requests failed, first: {errors[0]!r};"
                            f" {pool.in_use} of {pool.size} connections still out")
        assert pool.in_use == 0, f"{pool.in_use} connections never given back"
        statuses = [r["status"] for r in results]
        assert statuses.count(404) == 240 and statuses.count(200) == 480, statuses

    asyncio.run(scenario())


# --- PASS_TO_PASS -------------------------------------------------------------------------


def test_repository_answers_unchanged():
    async def scenario():
        repo = MessageRepository(CountingPool(_db()))
        user = await repo.get_user("u-1")
        assert user is not None and user.display_name == "Padaria Sol", user
        assert await repo.get_user("u-404") is None
        assert await repo.save_inbound("m-5", "u-1", "oi", 1) is True
        assert await repo.save_inbound("m-5", "u-1", "oi", 2) is False
        assert await repo.update_status("m-5", "read", 3) is True
        assert await repo.update_status("m-5", "read", 4) is False
        try:
            await repo.update_status("m-404", "read", 5)
        except UnknownMessage as exc:
            assert "m-404" in str(exc), exc
        else:
            raise AssertionError("an unknown message must raise UnknownMessage")

    asyncio.run(scenario())


def test_api_status_codes_unchanged():
    async def scenario():
        api = SyncApi(MessageRepository(CountingPool(_db())))
        assert (await api.get_profile("u-404"))["status"] == 404
        assert (await api.inbound_webhook({"from": "u-1"}))["status"] == 400
        ok = await api.status_webhook({"message_id": "m-1", "status": "read", "timestamp": 1})
        assert ok["status"] == 200 and ok["body"]["changed"] is True, ok
        gone = await api.status_webhook({"message_id": "m-x", "status": "read", "timestamp": 1})
        assert gone["status"] == 404, gone
        bad = await api.status_webhook({"message_id": "m-1", "status": "seen", "timestamp": 1})
        assert bad["status"] == 400, bad

    asyncio.run(scenario())


def test_profiles_still_masked():
    async def scenario():
        response = await SyncApi(MessageRepository(CountingPool(_db()))).get_profile("u-1")
        assert response["status"] == 200, response
        body = str(response["body"])
        assert "91234" not in body and "caixa@" not in body, body

    asyncio.run(scenario())


def test_pool_still_bounded():
    async def scenario():
        async def connect():
            return object()

        pool = ConnectionPool(connect, size=2, acquire_timeout=0)
        first = await pool.acquire()
        await pool.acquire()
        try:
            await pool.acquire()
        except PoolExhausted as exc:
            assert "timeout acquiring connection" in str(exc), exc
        else:
            raise AssertionError("a third acquire on a pool of two must fail")
        await pool.release(first)
        reuse = ConnectionPool(connect, size=1, acquire_timeout=1.0)
        conn = await reuse.acquire()
        await reuse.release(conn)
        assert await reuse.acquire() is conn, "an idle connection must be reused"

    asyncio.run(scenario())
