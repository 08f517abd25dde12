"""Grader probes for meta-sre/db-connection-leak-v2 (never shown to agents).

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

One probe per pooled call walks every path of that call (found, not found, duplicate, already
done, unknown, a query that fails, the same call once the database answers again) and observes
what it returns or raises and how many connections are still checked out after it; one probe
per module runs a peak-hour mix of its calls against a bounded pool of {{pool.size}}; likewise for
capi_pipeline's postgres event store. The seed's leaking call and its module are FAIL_TO_PASS;
every other call and module is PASS_TO_PASS, with the API's status codes, the masked profiles
and the pool's bound.
"""

import asyncio
import collections
import json

from whatsapp_sync import ConnectionPool, MessageRepository, PoolExhausted, SyncApi
from whatsapp_sync import media, optouts, outbox, repository, templates

from capi_pipeline import ConversionEvent
from capi_pipeline import pg_store
from capi_pipeline.store import INSERT_EVENT_SQL

POOL_SIZE = {{pool.size}}


class StatementTimeout(RuntimeError):
    """What the driver raises when postgres cancels a statement."""


def _db():
    return {
        "users": {"u-1": {"user_id": "u-1", "display_name": "Padaria Sol",
                          "phone": "+55 11 91234 5678", "email": "caixa@padariasol.example",
                          "locale": "pt_BR", "opted_in": True}},
        "messages": {"m-1": {"message_id": "m-1", "status": "delivered"},
                     "m-seed": {"message_id": "m-seed", "status": "received"}},
        "templates": {
            ("promo", "en_US"): {"name": "promo", "locale": "en_US", "body": "Hi {{1}}",
                                 "status": "approved"},
            ("promo", "pt_BR"): {"name": "promo", "locale": "pt_BR", "body": "Oi {{1}}",
                                 "status": "pending"},
            ("draft", "en_US"): {"name": "draft", "locale": "en_US", "body": "Soon",
                                 "status": "pending"},
        },
        "optouts": {"u-stop": {"user_id": "u-stop", "opted_out_at": 5, "reason": "STOP"}},
        "outbox": {
            "o-sent": {"message_id": "o-sent", "user_id": "u-1", "state": "sent", "attempts": 0},
            "o-dead": {"message_id": "o-dead", "user_id": "u-1", "state": "dead", "attempts": 3},
            "o-1": {"message_id": "o-1", "user_id": "u-1", "state": "queued", "attempts": 0},
        },
    }


class _Conn:
    """Serves every table from dicts; a first argument "slow-..." times the statement out."""

    def __init__(self, db):
        self.db = db

    async def fetch_one(self, query, *args):
        await asyncio.sleep(0)
        if str(args[0]).startswith("slow-"):
            raise StatementTimeout("canceling statement due to statement timeout")
        db = self.db
        if query == templates.SELECT_TEMPLATE:
            row = db["templates"].get((args[0], args[1]))
        elif query == optouts.SELECT_OPT_OUT:
            row = db["optouts"].get(args[0])
        elif query == outbox.SELECT_OUTBOX:
            row = db["outbox"].get(args[0])
        elif query == repository.SELECT_USER:
            row = db["users"].get(args[0])
        elif query == repository.SELECT_MESSAGE:
            row = db["messages"].get(args[0])
        else:
            db["unexpected_queries"] = db.get("unexpected_queries", 0) + 1
            row = None
        return dict(row) if row is not None else None

    async def execute(self, query, *args):
        await asyncio.sleep(0)
        if str(args[0]).startswith("slow-"):
            raise StatementTimeout("canceling statement due to statement timeout")
        db = self.db
        if query == templates.INSERT_TEMPLATE:
            db["templates"][(args[0], args[1])] = {"name": args[0], "locale": args[1],
                                                   "body": args[2], "status": "pending"}
        elif query == templates.APPROVE_TEMPLATE:
            db["templates"][(args[0], args[1])]["status"] = "approved"
        elif query == optouts.INSERT_OPT_OUT:
            db["optouts"][args[0]] = {"user_id": args[0], "opted_out_at": args[1],
                                      "reason": args[2]}
        elif query == optouts.DELETE_OPT_OUT:
            db["optouts"].pop(args[0], None)
        elif query == outbox.INSERT_OUTBOX:
            db["outbox"][args[0]] = {"message_id": args[0], "user_id": args[1],
                                     "state": "queued", "attempts": 0}
        elif query == outbox.MARK_SENT:
            db["outbox"][args[0]]["state"] = "sent"
        elif query == outbox.RECORD_FAILURE:
            db["outbox"][args[0]].update(attempts=args[1], state=args[2])
        elif query == repository.INSERT_MESSAGE:
            db["messages"][args[0]] = {"message_id": args[0], "status": "received"}
        elif query == repository.UPDATE_STATUS:
            db["messages"][args[0]]["status"] = args[1]
        else:
            db["unexpected_queries"] = db.get("unexpected_queries", 0) + 1
        return 1


class _CountingPool:
    """Unbounded; counts what is checked out, and counts (and ignores) double releases."""

    def __init__(self, db):
        self.db, self.out, self.double_releases = db, 0, 0

    async def acquire(self):
        self.out += 1
        return _Conn(self.db)

    async def release(self, conn):
        if self.out <= 0:
            self.double_releases += 1
            return
        self.out -= 1


class _Bounded:
    """At most `size` connections out; a waiting acquire gives up after 300 loop turns.

    Waiters queue in order and a released connection goes to the first of them; one ticker
    task counts the loop turns for them all. (Each waiter spinning on its own made a peak of
    600 calls cost about a hundred thousand task steps: most of this file's grading time.)
    """

    exhausted_error = PoolExhausted

    def __init__(self, conns):
        self.idle, self.size = conns, len(conns)
        self.in_use, self.exhausted = 0, 0
        self.waiters = collections.deque()  # (future, the turn it gives up at)
        self.turn, self.ticking = 0, False

    async def acquire(self):
        if self.idle and not self.waiters:
            self.in_use += 1
            return self.idle.pop()
        waiter = asyncio.get_running_loop().create_future()
        self.waiters.append((waiter, self.turn + 300))
        if not self.ticking:
            self.ticking = True
            asyncio.ensure_future(self._tick())
        return await waiter

    async def _tick(self):
        while self.waiters:
            await asyncio.sleep(0)
            self.turn += 1
            while self.waiters and self.waiters[0][1] <= self.turn:
                waiter, _ = self.waiters.popleft()
                if not waiter.done():
                    self.exhausted += 1
                    waiter.set_exception(self.exhausted_error(
                        f"timeout acquiring connection: {self.in_use}/{self.size} in use"))
        self.ticking = False

    async def release(self, conn):
        self.in_use -= 1
        while self.waiters:
            waiter, _ = self.waiters.popleft()
            if not waiter.done():
                self.in_use += 1
                waiter.set_result(conn)
                return
        self.idle.append(conn)


class _BoundedPool(_Bounded):
    def __init__(self, size, db):
        super().__init__([_Conn(db) for _ in range(size)])


def _plain(value):
    """An answer as data: a User as its display name, anything else as is."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
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
        "messages": {k: v["status"] for k, v in sorted(db["messages"].items())},
        "templates": {f"{k[0]}/{k[1]}": v["status"] for k, v in sorted(db["templates"].items())},
        "optouts": sorted(db["optouts"]),
        "outbox": {k: [v["state"], v["attempts"]] for k, v in sorted(db["outbox"].items())},
        "unexpected_queries": db.get("unexpected_queries", 0),
    }


async def _walk(make, steps):
    """Run `steps` ((name, call on the repository) pairs) in order on a counting pool."""
    db = _db()
    pool = _CountingPool(db)
    repo = make(pool)
    observed = []
    for name, call in steps:
        try:
            returned = {"returned": _plain(await call(repo))}
        except Exception as exc:  # what the caller would see
            returned = {"raised": type(exc).__name__}
        observed.append({"step": name, **returned, "connections_out": pool.out})
    return {"steps": observed, "double_releases": pool.double_releases, "stored": _stored(db)}


async def _peak(make, calls):
    """Run `calls` (functions of the repository) concurrently against a bounded pool."""
    db = _db()
    pool = _BoundedPool(POOL_SIZE, db)
    repo = make(pool)
    results = await asyncio.gather(*(call(repo) for call in calls), return_exceptions=True)
    return {
        "failed": _tally(type(r).__name__ for r in results if isinstance(r, BaseException)),
        "answers": _tally(_plain(r) for r in results if not isinstance(r, BaseException)),
        "connections_in_use": pool.in_use,
        "exhausted": pool.exhausted,
        "stored": _stored(db),
    }


# --- one probe per pooled call ---------------------------------------------------------------


async def get_user_gives_its_connection_back():
    return await _walk(MessageRepository, [
        ("found", lambda r: r.get_user("u-1")),
        ("not found", lambda r: r.get_user("u-404")),
        ("query fails", lambda r: r.get_user("slow-u-1")),
        ("not found again", lambda r: r.get_user("u-405")),
        ("found again", lambda r: r.get_user("u-1")),
    ])


async def save_inbound_gives_its_connection_back():
    return await _walk(MessageRepository, [
        ("new", lambda r: r.save_inbound("m-2", "u-1", "oi", 10)),
        ("redelivered", lambda r: r.save_inbound("m-2", "u-1", "oi", 11)),
        ("query fails", lambda r: r.save_inbound("slow-m-3", "u-1", "oi", 12)),
        ("redelivered again", lambda r: r.save_inbound("m-1", "u-1", "oi", 13)),
        ("new again", lambda r: r.save_inbound("m-4", "u-1", "tchau", 14)),
    ])


async def update_status_gives_its_connection_back():
    return await _walk(MessageRepository, [
        ("changed", lambda r: r.update_status("m-1", "read", 12)),
        ("repeated", lambda r: r.update_status("m-1", "read", 13)),
        ("unknown message", lambda r: r.update_status("m-404", "read", 14)),
        ("query fails", lambda r: r.update_status("slow-m-1", "read", 15)),
        ("changed again", lambda r: r.update_status("m-seed", "delivered", 16)),
        ("repeated again", lambda r: r.update_status("m-seed", "delivered", 17)),
    ])


async def get_template_gives_its_connection_back():
    return await _walk(templates.TemplateRepository, [
        ("approved in its locale", lambda r: r.get_template("promo", "en_US")),
        ("falls back to en_US", lambda r: r.get_template("promo", "pt_BR")),
        ("pending everywhere", lambda r: r.get_template("draft", "de_DE")),
        ("unknown", lambda r: r.get_template("nope", "es_ES")),
        ("query fails", lambda r: r.get_template("slow-promo", "en_US")),
        ("falls back again", lambda r: r.get_template("promo", "fr_FR")),
    ])


async def submit_template_gives_its_connection_back():
    return await _walk(templates.TemplateRepository, [
        ("new", lambda r: r.submit_template("welcome", "es_ES", "Hola", 1)),
        ("exists", lambda r: r.submit_template("welcome", "es_ES", "Hola!", 2)),
        ("exists from before", lambda r: r.submit_template("promo", "en_US", "Hi", 3)),
        ("query fails", lambda r: r.submit_template("slow-welcome", "es_ES", "Hola", 4)),
        ("new again", lambda r: r.submit_template("welcome", "de_DE", "Hallo", 5)),
    ])


async def approve_template_gives_its_connection_back():
    return await _walk(templates.TemplateRepository, [
        ("pending", lambda r: r.approve_template("promo", "pt_BR", 1)),
        ("already approved", lambda r: r.approve_template("promo", "pt_BR", 2)),
        ("never submitted", lambda r: r.approve_template("promo", "ja_JP", 3)),
        ("query fails", lambda r: r.approve_template("slow-draft", "en_US", 4)),
        ("pending again", lambda r: r.approve_template("draft", "en_US", 5)),
        ("never submitted again", lambda r: r.approve_template("ghost", "en_US", 6)),
    ])


async def record_opt_out_gives_its_connection_back():
    return await _walk(optouts.OptOutRepository, [
        ("new", lambda r: r.record_opt_out("u-1", 10, "STOP")),
        ("again", lambda r: r.record_opt_out("u-1", 11, "STOP")),
        ("from before", lambda r: r.record_opt_out("u-stop", 12, "PARAR")),
        ("query fails", lambda r: r.record_opt_out("slow-u-2", 13, "STOP")),
        ("new again", lambda r: r.record_opt_out("u-3", 14, "BAJA")),
    ])


async def may_message_gives_its_connection_back():
    return await _walk(optouts.OptOutRepository, [
        ("opted out", lambda r: r.may_message("u-stop")),
        ("not opted out", lambda r: r.may_message("u-1")),
        ("query fails", lambda r: r.may_message("slow-u-stop")),
        ("opted out again", lambda r: r.may_message("u-stop")),
        ("query fails again", lambda r: r.may_message("slow-u-1")),
    ])


async def opt_back_in_gives_its_connection_back():
    return await _walk(optouts.OptOutRepository, [
        ("opted out", lambda r: r.opt_back_in("u-stop")),
        ("no longer", lambda r: r.opt_back_in("u-stop")),
        ("never opted out", lambda r: r.opt_back_in("u-1")),
        ("query fails", lambda r: r.opt_back_in("slow-u-stop")),
        ("never again", lambda r: r.opt_back_in("u-9")),
    ])


async def enqueue_gives_its_connection_back():
    return await _walk(outbox.OutboxRepository, [
        ("new", lambda r: r.enqueue("o-2", "u-1", "promo", 1)),
        ("client retry", lambda r: r.enqueue("o-2", "u-1", "promo", 2)),
        ("already sent", lambda r: r.enqueue("o-sent", "u-1", "promo", 3)),
        ("query fails", lambda r: r.enqueue("slow-o-3", "u-1", "promo", 4)),
        ("new again", lambda r: r.enqueue("o-4", "u-stop", "promo", 5)),
    ])


async def mark_sent_gives_its_connection_back():
    return await _walk(outbox.OutboxRepository, [
        ("queued", lambda r: r.mark_sent("o-1", 1)),
        ("already sent", lambda r: r.mark_sent("o-1", 2)),
        ("unknown", lambda r: r.mark_sent("o-404", 3)),
        ("query fails", lambda r: r.mark_sent("slow-o-1", 4)),
        ("dead", lambda r: r.mark_sent("o-dead", 5)),
        ("unknown again", lambda r: r.mark_sent("o-405", 6)),
    ])


async def record_failure_gives_its_connection_back():
    return await _walk(outbox.OutboxRepository, [
        ("first failure", lambda r: r.record_failure("o-1")),
        ("second failure", lambda r: r.record_failure("o-1")),
        ("third failure", lambda r: r.record_failure("o-1")),
        ("dead already", lambda r: r.record_failure("o-1")),
        ("sent already", lambda r: r.record_failure("o-sent")),
        ("unknown", lambda r: r.record_failure("o-404")),
        ("query fails", lambda r: r.record_failure("slow-o-1")),
    ])


class _Transport:
    """The Cloud API: refuses the users in `refuse`."""

    def __init__(self, refuse):
        self.refuse, self.posted = refuse, []

    async def post(self, user_id, template):
        await asyncio.sleep(0)
        if user_id in self.refuse:
            raise outbox.TransportError("429 too many requests")
        self.posted.append(user_id)


async def send_gives_its_slot_back():
    db = _db()
    db["outbox"]["o-2"] = {"message_id": "o-2", "user_id": "u-2", "state": "queued",
                           "attempts": 0}
    pool = _CountingPool(db)
    transport = _Transport({"u-busy"})
    sender = outbox.Sender(outbox.OutboxRepository(pool), transport, slots=3)
    steps = [
        ("accepted", ("o-1", "u-1")),
        ("refused", ("o-2", "u-busy")),
        ("refused again", ("o-2", "u-busy")),
        ("vanished from the outbox", ("o-404", "u-1")),
        ("accepted after", ("o-2", "u-2")),
        ("query fails", ("slow-o-9", "u-1")),
        ("refused when dead", ("o-dead", "u-busy")),
        ("accepted last", ("o-sent", "u-1")),
    ]
    observed = []
    for name, (message_id, user_id) in steps:
        if sender.free_slots <= 0:  # a send now would wait forever for a slot
            observed.append({"step": name, "blocked": True})
            continue
        try:
            result = {"returned": await sender.send(message_id, user_id, "promo", 7)}
        except Exception as exc:
            result = {"raised": type(exc).__name__}
        observed.append({"step": name, **result, "free_slots": sender.free_slots,
                         "connections_out": pool.out})
    return {"steps": observed, "posted": transport.posted, "stored": _stored(db)}


# --- one peak-hour probe per module ----------------------------------------------------------


async def repository_peak_never_exhausts_the_pool():
    db = _db()
    pool = _BoundedPool(POOL_SIZE, db)
    api = SyncApi(MessageRepository(pool))
    calls = []
    for i in range(810):
        kind = i % 9
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
        elif kind == 5:
            calls.append(api.get_profile(f"u-gone-{i}"))
        elif kind == 6:
            calls.append(api.get_profile(f"slow-u-{i}"))
        elif kind == 7:
            calls.append(api.status_webhook({"message_id": f"slow-{i}", "status": "read",
                                             "timestamp": i}))
        else:
            calls.append(api.inbound_webhook({"message_id": f"slow-{i}", "from": "u-1",
                                              "timestamp": i}))
    results = await asyncio.gather(*calls, return_exceptions=True)
    answers = [r for r in results if not isinstance(r, BaseException)]
    return {
        "failed": _tally(type(r).__name__ for r in results if isinstance(r, BaseException)),
        "statuses": _tally(r.get("status") for r in answers),
        "bodies": _tally(r.get("body") for r in answers if r.get("status") == 200),
        "connections_in_use": pool.in_use,
        "exhausted": pool.exhausted,
        "stored": _stored(db),
    }


async def templates_peak_never_exhausts_the_pool():
    calls = []
    for i in range(600):
        kind = i % 8
        if kind == 0:
            calls.append(lambda r: r.get_template("promo", "pt_BR"))
        elif kind == 1:
            calls.append(lambda r, i=i: r.get_template(f"missing-{i}", "de_DE"))
        elif kind == 2:
            calls.append(lambda r, i=i: r.get_template(f"slow-{i}", "en_US"))
        elif kind == 3:
            calls.append(lambda r, i=i: r.submit_template("promo", "en_US", "Hi", i))
        elif kind == 4:
            calls.append(lambda r, i=i: r.submit_template(f"slow-{i}", "en_US", "Hi", i))
        elif kind == 5:
            calls.append(lambda r, i=i: r.approve_template("promo", "en_US", i))
        elif kind == 6:
            calls.append(lambda r, i=i: r.approve_template(f"never-{i}", "en_US", i))
        else:
            calls.append(lambda r, i=i: r.approve_template(f"slow-{i}", "en_US", i))
    return await _peak(templates.TemplateRepository, calls)


async def optouts_peak_never_exhausts_the_pool():
    calls = []
    for i in range(560):
        kind = i % 7
        if kind == 0:
            calls.append(lambda r, i=i: r.record_opt_out("u-stop", i, "STOP"))
        elif kind == 1:
            calls.append(lambda r, i=i: r.record_opt_out(f"slow-{i}", i, "STOP"))
        elif kind == 2:
            calls.append(lambda r, i=i: r.may_message(f"u-{i}"))
        elif kind == 3:
            calls.append(lambda r, i=i: r.may_message(f"slow-{i}"))
        elif kind == 4:
            calls.append(lambda r, i=i: r.opt_back_in(f"u-never-{i}"))
        elif kind == 5:
            calls.append(lambda r, i=i: r.opt_back_in(f"slow-{i}"))
        else:
            calls.append(lambda r: r.may_message("u-stop"))
    return await _peak(optouts.OptOutRepository, calls)


async def outbox_peak_never_exhausts_the_pool():
    calls = []
    for i in range(640):
        kind = i % 8
        if kind == 0:
            calls.append(lambda r, i=i: r.enqueue("o-sent", "u-1", "promo", i))
        elif kind == 1:
            calls.append(lambda r, i=i: r.enqueue(f"slow-{i}", "u-1", "promo", i))
        elif kind == 2:
            calls.append(lambda r, i=i: r.mark_sent("o-sent", i))
        elif kind == 3:
            calls.append(lambda r, i=i: r.mark_sent(f"o-gone-{i}", i))
        elif kind == 4:
            calls.append(lambda r: r.record_failure("o-sent"))
        elif kind == 5:
            calls.append(lambda r, i=i: r.record_failure(f"o-gone-{i}"))
        elif kind == 6:
            calls.append(lambda r: r.record_failure("o-dead"))
        else:
            calls.append(lambda r, i=i: r.mark_sent(f"slow-{i}", i))
    return await _peak(outbox.OutboxRepository, calls)


async def sender_peak_keeps_its_send_slots():
    db = _db()
    for i in range(96):
        db["outbox"][f"q-{i}"] = {"message_id": f"q-{i}", "user_id": f"u-{i}",
                                  "state": "queued", "attempts": 0}
    pool = _BoundedPool(POOL_SIZE, db)
    transport = _Transport({f"u-{i}" for i in range(96) if i % 4 == 1})
    sender = outbox.Sender(outbox.OutboxRepository(pool), transport, slots=4)
    states, rounds = [], 0
    for start in range(0, 120, 4):
        if sender.free_slots < 4:
            break
        rounds += 1
        batch = []
        for i in range(start, start + 4):
            message_id = f"q-{i}" if i < 96 else (f"slow-{i}" if i % 2 else f"q-gone-{i}")
            batch.append(sender.send(message_id, f"u-{i}", "promo", i))
        states += await asyncio.gather(*batch, return_exceptions=True)
    return {
        "rounds": rounds,
        "states": _tally(s if isinstance(s, str) else type(s).__name__ for s in states),
        "free_slots": sender.free_slots,
        "posted": len(transport.posted),
        "connections_in_use": pool.in_use,
        "stored": _tally(v["state"] for v in db["outbox"].values()),
    }


# --- whatsapp_sync's attachment reads (blob handles) ----------------------------------------


class _Handle:
    def __init__(self, volume, data, fail):
        self.volume, self.data, self.fail, self.closed = volume, data, fail, False

    def read(self, size):
        if self.fail:
            raise OSError(5, "Input/output error")
        return self.data[:size]

    def close(self):
        if self.closed:
            self.volume.double_closes += 1
            return
        self.closed = True
        self.volume.open_handles -= 1


# One blob just over the limit, made once and shared by every volume: a read of the limit plus
# one byte (what a reader asks for to see that a blob is too large) returns it whole, and
# CPython gives a whole-bytes slice back without copying. A blob a few bytes longer cost every
# such read a 16 MiB copy, and every volume two more (db-connection-leak graded in ~300 ms
# instead of ~50).
_HUGE = b"%PDF".ljust(media.config.MAX_MEDIA_BYTES + 1, b"h")
_BLOBS = {
    "jpg": b"\xff\xd8\xff\xe0" + b"j" * 40, "png": b"\x89PNG\r\n" + b"p" * 30,
    "pdf": b"%PDF-1.7" + b"d" * 20, "ogg": b"OggS" + b"o" * 12, "txt": b"plain text",
    "huge": _HUGE,
}


class _Volume:
    """Blobs by id; "bad-..." opens but fails to read; at most `limit` handles open."""

    def __init__(self, limit=10_000):
        self.blobs = _BLOBS
        self.limit, self.open_handles, self.refused, self.double_closes = limit, 0, 0, 0

    def open(self, media_id):
        if media_id not in self.blobs and not media_id.startswith("bad-"):
            raise KeyError(media_id)
        if self.open_handles >= self.limit:
            self.refused += 1
            raise OSError(24, "Too many open files")
        self.open_handles += 1
        return _Handle(self, self.blobs.get(media_id, b""), media_id.startswith("bad-"))


def _media_walk(steps):
    volume = _Volume()
    reader = media.MediaReader(volume)
    observed = []
    for name, call in steps:
        try:
            result = call(reader)
            returned = {"returned": result if isinstance(result, str) else
                        {"bytes": len(result), "head": list(result[:4])}}
        except Exception as exc:
            returned = {"raised": type(exc).__name__}
        observed.append({"step": name, **returned, "open_handles": volume.open_handles})
    return {"steps": observed, "double_closes": volume.double_closes}


def media_fetch_gives_its_handle_back():
    return _media_walk([
        ("small", lambda r: r.fetch("jpg")),
        ("over the limit", lambda r: r.fetch("huge")),
        ("unknown id", lambda r: r.fetch("nope")),
        ("read fails", lambda r: r.fetch("bad-1")),
        ("small again", lambda r: r.fetch("txt")),
        ("over the limit again", lambda r: r.fetch("huge")),
    ])


def media_sniff_gives_its_handle_back():
    return _media_walk([
        ("jpeg", lambda r: r.sniff("jpg")),
        ("png", lambda r: r.sniff("png")),
        ("unknown type", lambda r: r.sniff("txt")),
        ("pdf", lambda r: r.sniff("pdf")),
        ("read fails", lambda r: r.sniff("bad-2")),
        ("unknown id", lambda r: r.sniff("nope")),
        ("ogg", lambda r: r.sniff("ogg")),
    ])


def media_peak_keeps_its_handles():
    volume = _Volume(limit=48)
    reader = media.MediaReader(volume)
    outcomes = []
    for i in range(420):
        media_id = ("jpg", "png", "txt", "huge", f"bad-{i}", "pdf", "nope")[i % 7]
        call = reader.fetch if i % 2 else reader.sniff
        try:
            result = call(media_id)
            outcomes.append(result if isinstance(result, str) else f"{len(result)} bytes")
        except Exception as exc:
            outcomes.append(type(exc).__name__)
    return {"outcomes": _tally(outcomes), "open_handles": volume.open_handles,
            "refused": volume.refused}


# --- capi_pipeline's postgres event store -------------------------------------------------


class _CapiConn:
    """conversion_events from a dict; an event or click id "slow-..." or a cutoff of -1 times
    the statement out."""

    def __init__(self, rows):
        self.rows = rows

    async def fetch_one(self, query, *args):
        await asyncio.sleep(0)
        if str(args[0]).startswith("slow-"):
            raise StatementTimeout("canceling statement due to statement timeout")
        if query == pg_store.SELECT_EVENT:
            row = self.rows.get(args[0])
            return None if row is None else {"event_id": args[0], "event_time": row[2]}
        if query == pg_store.COUNT_FOR_CLICK:
            return {"n": sum(1 for r in self.rows.values() if r[3] == args[0])}
        return None

    async def execute(self, query, *args):
        await asyncio.sleep(0)
        if str(args[0]).startswith("slow-") or args[0] == -1:
            raise StatementTimeout("canceling statement due to statement timeout")
        if query == INSERT_EVENT_SQL:
            if args[0] in self.rows:
                return 0
            self.rows[args[0]] = args
            return 1
        if query == pg_store.PURGE_BEFORE:
            old = [k for k, r in self.rows.items() if r[2] < args[0]]
            for k in old:
                del self.rows[k]
            return len(old)
        return 0


class _CapiCountingPool:
    def __init__(self, rows):
        self.rows, self.out, self.double_releases = rows, 0, 0

    async def acquire(self):
        self.out += 1
        return _CapiConn(self.rows)

    async def release(self, conn):
        if self.out <= 0:
            self.double_releases += 1
            return
        self.out -= 1


class _CapiBoundedPool(_Bounded):
    exhausted_error = pg_store.PoolExhausted

    def __init__(self, size, rows):
        super().__init__([_CapiConn(rows) for _ in range(size)])


NOW = 1_717_000_000


def _event(event_id, click="clk-1", days_ago=1):
    return ConversionEvent(event_id, "Purchase", NOW - days_ago * 86400, click, 9_990_000, "BRL")


def _capi_rows():
    return {e.event_id: (e.event_id, e.event_name, e.event_time, e.click_id, e.value_micros,
                         e.currency)
            for e in (_event("e-1"), _event("e-2", "clk-2"), _event("e-old", "clk-1", 40))}


async def _capi_walk(steps):
    rows = _capi_rows()
    pool = _CapiCountingPool(rows)
    store = pg_store.PostgresEventStore(pool)
    observed = []
    for name, call in steps:
        try:
            returned = {"returned": _plain(await call(store))}
        except Exception as exc:
            returned = {"raised": type(exc).__name__}
        observed.append({"step": name, **returned, "connections_out": pool.out})
    return {"steps": observed, "double_releases": pool.double_releases, "stored": sorted(rows)}


async def capi_insert_event_gives_its_connection_back():
    return await _capi_walk([
        ("new", lambda s: s.insert_event(_event("e-3"))),
        ("advertiser retry", lambda s: s.insert_event(_event("e-3"))),
        ("stored before", lambda s: s.insert_event(_event("e-1"))),
        ("query fails", lambda s: s.insert_event(_event("slow-e-4"))),
        ("new again", lambda s: s.insert_event(_event("e-5", "clk-9"))),
    ])


async def capi_insert_batch_gives_its_connection_back():
    return await _capi_walk([
        ("new batch", lambda s: s.insert_batch([_event("b-1"), _event("b-2")])),
        ("retried batch", lambda s: s.insert_batch([_event("b-1"), _event("b-3")])),
        ("empty batch", lambda s: s.insert_batch([])),
        ("query fails mid-batch", lambda s: s.insert_batch([_event("b-4"), _event("slow-b-5")])),
        ("batch after", lambda s: s.insert_batch([_event("b-6")])),
    ])


async def capi_count_for_click_gives_its_connection_back():
    return await _capi_walk([
        ("two conversions", lambda s: s.count_for_click("clk-1")),
        ("one", lambda s: s.count_for_click("clk-2")),
        ("unknown click", lambda s: s.count_for_click("clk-404")),
        ("query fails", lambda s: s.count_for_click("slow-clk-1")),
        ("one again", lambda s: s.count_for_click("clk-2")),
    ])


async def capi_purge_before_gives_its_connection_back():
    return await _capi_walk([
        ("past the retention", lambda s: s.purge_before(NOW - 30 * 86400, NOW)),
        ("inside the retention", lambda s: s.purge_before(NOW - 3 * 86400, NOW)),
        ("query fails", lambda s: s.purge_before(-1, NOW)),
        ("nothing left to purge", lambda s: s.purge_before(NOW - 20 * 86400, NOW)),
        ("inside again", lambda s: s.purge_before(NOW, NOW)),
    ])


async def capi_peak_never_exhausts_the_pool():
    rows = _capi_rows()
    pool = _CapiBoundedPool(12, rows)
    store = pg_store.PostgresEventStore(pool)
    calls = []
    for i in range(560):
        kind = i % 8
        if kind == 0:
            calls.append(store.insert_event(_event(f"p-{i}")))
        elif kind == 1:
            calls.append(store.insert_event(_event("e-1")))
        elif kind == 2:
            calls.append(store.insert_event(_event(f"slow-{i}")))
        elif kind == 3:
            calls.append(store.insert_batch([_event(f"q-{i}"), _event("e-2")]))
        elif kind == 4:
            calls.append(store.insert_batch([] if i % 16 == 4 else [_event(f"slow-{i}")]))
        elif kind == 5:
            calls.append(store.count_for_click("slow-clk" if i % 16 == 5 else "clk-1"))
        elif kind == 6:
            calls.append(store.purge_before(NOW - (3 if i % 16 == 6 else 30) * 86400, NOW))
        else:
            calls.append(store.purge_before(-1, NOW))
    results = await asyncio.gather(*calls, return_exceptions=True)
    return {
        "failed": _tally(type(r).__name__ for r in results if isinstance(r, BaseException)),
        "answers": _tally(r for r in results if not isinstance(r, BaseException)),
        "connections_in_use": pool.in_use,
        "exhausted": pool.exhausted,
        "stored": len(rows),
    }


# --- the rest of the service -----------------------------------------------------------------


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
        "display_name": response.get("body", {}).get("display_name"),
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
