"""Grader probes for meta-sre/db-connection-leak-v1 (never shown to agents).

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

FAIL_TO_PASS: what each repository call answers and how many pooled connections are still out
after it, on every path (found, not found, duplicate, unknown message) and when a query raises;
what a peak-hour mix through the real handlers gets from a bounded pool of {{pool.size}}.
PASS_TO_PASS: what the repository and the API answer, the pool's bound, masked profiles.
"""

import asyncio
import json

from whatsapp_sync import ConnectionPool, MessageRepository, PoolExhausted, SyncApi, UnknownMessage
from whatsapp_sync import repository

POOL_SIZE = {{pool.size}}
USER = {"user_id": "u-1", "display_name": "Padaria Sol", "phone": "+55 11 91234 5678",
        "email": "caixa@padariasol.example", "locale": "pt_BR", "opted_in": True}


class _Conn:
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
            self.db["unexpected_queries"] = self.db.get("unexpected_queries", 0) + 1
        return 1


class _CountingPool:
    """Unbounded; counts what is checked out, and counts (and ignores) double releases."""

    def __init__(self, db, fail=False):
        self.db, self.fail, self.out, self.double_releases = db, fail, 0, 0

    async def acquire(self):
        self.out += 1
        return _Conn(self.db, self.fail)

    async def release(self, conn):
        if self.out <= 0:
            self.double_releases += 1
            return
        self.out -= 1


class _BoundedPool:
    """At most `size` connections out; a waiting acquire gives up after 300 loop turns."""

    def __init__(self, size, db):
        self.idle = [_Conn(db) for _ in range(size)]
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


def _plain(value):
    """A repository answer as data: a User as its display name, anything else as is."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return {"display_name": getattr(value, "display_name", None)}


def _tally(values):
    """How often each value occurs, keyed by the value (as JSON text unless a string)."""
    counts = {}
    for value in values:
        key = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def _stored(db):
    return {
        "messages": {mid: row["status"] for mid, row in sorted(db["messages"].items())},
        "unexpected_queries": db.get("unexpected_queries", 0),
    }


# --- FAIL_TO_PASS -------------------------------------------------------------------------


async def every_repository_path_gives_its_connection_back():
    db = _db()
    pool = _CountingPool(db)
    repo = MessageRepository(pool)
    steps = [
        ("get_user found", lambda: repo.get_user("u-1")),
        ("get_user not found", lambda: repo.get_user("u-404")),
        ("save_inbound new", lambda: repo.save_inbound("m-2", "u-1", "oi", 10)),
        ("save_inbound redelivered", lambda: repo.save_inbound("m-2", "u-1", "oi", 11)),
        ("update_status changed", lambda: repo.update_status("m-1", "read", 12)),
        ("update_status repeated", lambda: repo.update_status("m-1", "read", 13)),
    ]
    observed = []
    for name, call in steps:
        returned = _plain(await call())
        observed.append({"step": name, "returned": returned, "connections_out": pool.out})
    try:
        await repo.update_status("m-404", "read", 14)
    except UnknownMessage as exc:
        unknown = {"raised": type(exc).__name__}
    else:
        unknown = {"raised": None}
    unknown["connections_out"] = pool.out
    return {"steps": observed, "unknown_message": unknown,
            "double_releases": pool.double_releases, "stored": _stored(db)}


async def connection_given_back_when_a_query_fails():
    db = _db()
    pool = _CountingPool(db, fail=True)
    repo = MessageRepository(pool)
    calls = {
        "get_user": lambda: repo.get_user("u-1"),
        "save_inbound": lambda: repo.save_inbound("m-9", "u-1", "oi", 1),
        "update_status": lambda: repo.update_status("m-1", "read", 2),
    }
    observed = {}
    for name, call in calls.items():
        # the query fails: what is raised, and what is still checked out
        pool.fail = True
        try:
            returned = await call()
        except RuntimeError as exc:
            failing = {"raised": type(exc).__name__}
        else:
            failing = {"raised": None, "returned": _plain(returned)}
        failing["connections_out"] = pool.out
        # the database answers again: the same call, on the same repository
        pool.fail = False
        answered = {"returned": _plain(await call()), "connections_out": pool.out}
        observed[name] = {"failing": failing, "recovered": answered}
    return {"calls": observed, "double_releases": pool.double_releases, "stored": _stored(db)}


async def evening_peak_never_exhausts_the_pool():
    db = _db()
    db["messages"]["m-seed"] = {"message_id": "m-seed", "status": "received"}
    pool = _BoundedPool(POOL_SIZE, db)
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
    answers = [r for r in results if not isinstance(r, BaseException)]
    bodies = [r.get("body") for r in answers if r.get("status") == 200]
    stored = _stored(db)
    return {
        "failed": _tally(type(r).__name__ for r in results if isinstance(r, BaseException)),
        "statuses": _tally(r.get("status") for r in answers),
        "duplicates": _tally(b.get("duplicate") for b in bodies if "duplicate" in b),
        "changed": _tally(b.get("changed") for b in bodies if "changed" in b),
        "profiles": _tally(b for b in bodies if "display_name" in b),
        "connections_in_use": pool.in_use,
        "exhausted": pool.exhausted,
        "stored_messages": len(stored["messages"]),
        "seeded_statuses": {mid: stored["messages"].get(mid) for mid in ("m-1", "m-seed")},
    }


# --- PASS_TO_PASS -------------------------------------------------------------------------


async def repository_answers_unchanged():
    repo = MessageRepository(_CountingPool(_db()))
    observed = {
        "get_user found": _plain(await repo.get_user("u-1")),
        "get_user not found": _plain(await repo.get_user("u-404")),
        "save_inbound new": await repo.save_inbound("m-5", "u-1", "oi", 1),
        "save_inbound redelivered": await repo.save_inbound("m-5", "u-1", "oi", 2),
        "update_status changed": await repo.update_status("m-5", "read", 3),
        "update_status repeated": await repo.update_status("m-5", "read", 4),
    }
    try:
        returned = await repo.update_status("m-404", "read", 5)
    except UnknownMessage as exc:
        observed["update_status unknown"] = {"raised": type(exc).__name__,
                                             "names_the_message": "m-404" in str(exc)}
    else:
        observed["update_status unknown"] = {"raised": None, "returned": _plain(returned)}
    return observed


async def api_status_codes_unchanged():
    api = SyncApi(MessageRepository(_CountingPool(_db())))
    missing = await api.get_profile("u-404")
    malformed = await api.inbound_webhook({"from": "u-1"})
    ok = await api.status_webhook({"message_id": "m-1", "status": "read", "timestamp": 1})
    gone = await api.status_webhook({"message_id": "m-x", "status": "read", "timestamp": 1})
    bad = await api.status_webhook({"message_id": "m-1", "status": "seen", "timestamp": 1})
    return {
        "unknown_user": missing["status"],
        "malformed_inbound": malformed["status"],
        "status_update": {"status": ok["status"], "changed": ok.get("body", {}).get("changed")},
        "unknown_message": gone["status"],
        "unknown_status": bad["status"],
    }


async def profiles_still_masked():
    response = await SyncApi(MessageRepository(_CountingPool(_db()))).get_profile("u-1")
    body = str(response.get("body"))
    return {
        "status": response["status"],
        "shows_phone": "91234" in body,
        "shows_email": "caixa@" in body,
    }


async def pool_still_bounded():
    async def connect():
        return object()

    pool = ConnectionPool(connect, size=2, acquire_timeout=0)
    first = await pool.acquire()
    await pool.acquire()
    try:
        await pool.acquire()
    except PoolExhausted as exc:
        third = {"raised": type(exc).__name__,
                 "says_timeout": "timeout acquiring connection" in str(exc)}
    else:
        third = {"raised": None}
    await pool.release(first)
    reuse = ConnectionPool(connect, size=1, acquire_timeout=1.0)
    conn = await reuse.acquire()
    await reuse.release(conn)
    return {"third_acquire_of_two": third, "idle_connection_reused": await reuse.acquire() is conn}
