"""Production traffic of the messaging and conversions services: the calls they serve each minute.

Not a hidden check: the world replays these on the current code after each change, logs each
request with its outcome in its service's log, and a service recovers when its requests are
answered as the fixed code answers them (see metasre.simulator.traffic). Postgres cancels a
statement now and then at peak (statement timeouts are part of production traffic). The
hidden checks use other calls on other inputs.
"""

import asyncio
import json

from whatsapp_sync import ConnectionPool, MessageRepository, PoolExhausted, SyncApi
from whatsapp_sync import media, optouts, outbox, repository, templates

from capi_pipeline import ConversionEvent
from capi_pipeline import pg_store
from capi_pipeline.store import INSERT_EVENT_SQL



REQUESTS = {
    "get_user": ["whatsapp_sync", "GET /v1/users/{id}: u-71, u-604, a timed-out read, u-605, u-71"],
    "save_inbound": ["whatsapp_sync", "POST /v1/webhooks/inbound m-82 (twice), a timed-out write, m-81, m-84"],
    "update_status": ["whatsapp_sync", "POST /v1/webhooks/status m-81 read (twice), m-604, a timed-out write, m-old"],
    "get_template": ["whatsapp_sync", "GET /v1/templates/promo?locale=en_US|pt_BR|fr_FR, survey, unknown, a timed-out read"],
    "submit_template": ["whatsapp_sync", "POST /v1/templates order_ready (twice), promo, a timed-out write"],
    "approve_template": ["whatsapp_sync", "POST /v1/templates/approve promo pt_BR (twice), survey, unknown, a timed-out write"],
    "record_opt_out": ["whatsapp_sync", "POST /v1/optouts u-71 (twice), u-quit, a timed-out write, u-73"],
    "may_message": ["whatsapp_sync", "GET /v1/optouts/{id}: u-quit, u-71, timed-out reads"],
    "opt_back_in": ["whatsapp_sync", "DELETE /v1/optouts/{id}: u-quit (twice), u-71, a timed-out write, u-79"],
    "enqueue": ["whatsapp_sync", "POST /v1/outbox o-92 (client retry), o-done, a timed-out write, o-94"],
    "mark_sent": ["whatsapp_sync", "POST /v1/outbox/{id}/sent o-91 (twice), unknown, a timed-out write, o-gave-up"],
    "record_failure": ["whatsapp_sync", "POST /v1/outbox/o-91/failed (x4), o-done, unknown, a timed-out write"],
    "send": ["whatsapp_sync", "POST /v1/messages/send 8 sends, the Cloud API throttling u-throttled"],
    "media_fetch": ["whatsapp_sync", "GET /v1/media/{id}: jpg, huge, unknown, unreadable, txt"],
    "media_sniff": ["whatsapp_sync", "HEAD /v1/media/{id}: jpg, png, txt, pdf, unreadable, unknown, ogg"],
    "capi_insert_event": ["capi_pipeline", "POST /v1/events e-63 (advertiser retry), e-61, a timed-out insert, e-65"],
    "capi_insert_batch": ["capi_pipeline", "POST /v1/events:batch b-51,b-52 then retried, empty, a timed-out batch"],
    "capi_count_for_click": ["capi_pipeline", "GET /v1/clicks/{id}/conversions clk-61, clk-62, clk-604, a timed-out read"],
    "capi_purge_before": ["capi_pipeline", "POST /v1/events:purge retention 30d, 3d, a timed-out purge, 20d, now"],
}


class StatementTimeout(RuntimeError):
    """What the driver raises when postgres cancels a statement."""


def _db():
    return {
        "users": {"u-71": {"user_id": "u-71", "display_name": "Mercado Azul",
                          "phone": "+55 31 97777 1212", "email": "loja@mercadoazul.example",
                          "locale": "pt_BR", "opted_in": True}},
        "messages": {"m-81": {"message_id": "m-81", "status": "delivered"},
                     "m-old": {"message_id": "m-old", "status": "received"}},
        "templates": {
            ("promo", "en_US"): {"name": "promo", "locale": "en_US", "body": "Hi {{1}}",
                                 "status": "approved"},
            ("promo", "pt_BR"): {"name": "promo", "locale": "pt_BR", "body": "Oi {{1}}",
                                 "status": "pending"},
            ("survey", "en_US"): {"name": "survey", "locale": "en_US", "body": "Soon",
                                 "status": "pending"},
        },
        "optouts": {"u-quit": {"user_id": "u-quit", "opted_out_at": 5, "reason": "STOP"}},
        "outbox": {
            "o-done": {"message_id": "o-done", "user_id": "u-71", "state": "sent", "attempts": 0},
            "o-gave-up": {"message_id": "o-gave-up", "user_id": "u-71", "state": "dead", "attempts": 3},
            "o-91": {"message_id": "o-91", "user_id": "u-71", "state": "queued", "attempts": 0},
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


async def get_user():
    return await _walk(MessageRepository, [
        ("found", lambda r: r.get_user("u-71")),
        ("not found", lambda r: r.get_user("u-604")),
        ("query fails", lambda r: r.get_user("slow-u-71")),
        ("not found again", lambda r: r.get_user("u-605")),
        ("found again", lambda r: r.get_user("u-71")),
    ])


async def save_inbound():
    return await _walk(MessageRepository, [
        ("new", lambda r: r.save_inbound("m-82", "u-71", "oi", 10)),
        ("redelivered", lambda r: r.save_inbound("m-82", "u-71", "oi", 11)),
        ("query fails", lambda r: r.save_inbound("slow-m-83", "u-71", "oi", 12)),
        ("redelivered again", lambda r: r.save_inbound("m-81", "u-71", "oi", 13)),
        ("new again", lambda r: r.save_inbound("m-84", "u-71", "tchau", 14)),
    ])


async def update_status():
    return await _walk(MessageRepository, [
        ("changed", lambda r: r.update_status("m-81", "read", 12)),
        ("repeated", lambda r: r.update_status("m-81", "read", 13)),
        ("unknown message", lambda r: r.update_status("m-604", "read", 14)),
        ("query fails", lambda r: r.update_status("slow-m-81", "read", 15)),
        ("changed again", lambda r: r.update_status("m-old", "delivered", 16)),
        ("repeated again", lambda r: r.update_status("m-old", "delivered", 17)),
    ])


async def get_template():
    return await _walk(templates.TemplateRepository, [
        ("approved in its locale", lambda r: r.get_template("promo", "en_US")),
        ("falls back to en_US", lambda r: r.get_template("promo", "pt_BR")),
        ("pending everywhere", lambda r: r.get_template("survey", "de_DE")),
        ("unknown", lambda r: r.get_template("nope", "es_ES")),
        ("query fails", lambda r: r.get_template("slow-promo", "en_US")),
        ("falls back again", lambda r: r.get_template("promo", "fr_FR")),
    ])


async def submit_template():
    return await _walk(templates.TemplateRepository, [
        ("new", lambda r: r.submit_template("order_ready", "es_ES", "Hola", 1)),
        ("exists", lambda r: r.submit_template("order_ready", "es_ES", "Hola!", 2)),
        ("exists from before", lambda r: r.submit_template("promo", "en_US", "Hi", 3)),
        ("query fails", lambda r: r.submit_template("slow-welcome", "es_ES", "Hola", 4)),
        ("new again", lambda r: r.submit_template("order_ready", "de_DE", "Hallo", 5)),
    ])


async def approve_template():
    return await _walk(templates.TemplateRepository, [
        ("pending", lambda r: r.approve_template("promo", "pt_BR", 1)),
        ("already approved", lambda r: r.approve_template("promo", "pt_BR", 2)),
        ("never submitted", lambda r: r.approve_template("promo", "ja_JP", 3)),
        ("query fails", lambda r: r.approve_template("slow-draft", "en_US", 4)),
        ("pending again", lambda r: r.approve_template("survey", "en_US", 5)),
        ("never submitted again", lambda r: r.approve_template("retired", "en_US", 6)),
    ])


async def record_opt_out():
    return await _walk(optouts.OptOutRepository, [
        ("new", lambda r: r.record_opt_out("u-71", 10, "STOP")),
        ("again", lambda r: r.record_opt_out("u-71", 11, "STOP")),
        ("from before", lambda r: r.record_opt_out("u-quit", 12, "PARAR")),
        ("query fails", lambda r: r.record_opt_out("slow-u-72", 13, "STOP")),
        ("new again", lambda r: r.record_opt_out("u-73", 14, "BAJA")),
    ])


async def may_message():
    return await _walk(optouts.OptOutRepository, [
        ("opted out", lambda r: r.may_message("u-quit")),
        ("not opted out", lambda r: r.may_message("u-71")),
        ("query fails", lambda r: r.may_message("slow-u-quit")),
        ("opted out again", lambda r: r.may_message("u-quit")),
        ("query fails again", lambda r: r.may_message("slow-u-71")),
    ])


async def opt_back_in():
    return await _walk(optouts.OptOutRepository, [
        ("opted out", lambda r: r.opt_back_in("u-quit")),
        ("no longer", lambda r: r.opt_back_in("u-quit")),
        ("never opted out", lambda r: r.opt_back_in("u-71")),
        ("query fails", lambda r: r.opt_back_in("slow-u-quit")),
        ("never again", lambda r: r.opt_back_in("u-79")),
    ])


async def enqueue():
    return await _walk(outbox.OutboxRepository, [
        ("new", lambda r: r.enqueue("o-92", "u-71", "promo", 1)),
        ("client retry", lambda r: r.enqueue("o-92", "u-71", "promo", 2)),
        ("already sent", lambda r: r.enqueue("o-done", "u-71", "promo", 3)),
        ("query fails", lambda r: r.enqueue("slow-o-93", "u-71", "promo", 4)),
        ("new again", lambda r: r.enqueue("o-94", "u-quit", "promo", 5)),
    ])


async def mark_sent():
    return await _walk(outbox.OutboxRepository, [
        ("queued", lambda r: r.mark_sent("o-91", 1)),
        ("already sent", lambda r: r.mark_sent("o-91", 2)),
        ("unknown", lambda r: r.mark_sent("o-604", 3)),
        ("query fails", lambda r: r.mark_sent("slow-o-91", 4)),
        ("dead", lambda r: r.mark_sent("o-gave-up", 5)),
        ("unknown again", lambda r: r.mark_sent("o-605", 6)),
    ])


async def record_failure():
    return await _walk(outbox.OutboxRepository, [
        ("first failure", lambda r: r.record_failure("o-91")),
        ("second failure", lambda r: r.record_failure("o-91")),
        ("third failure", lambda r: r.record_failure("o-91")),
        ("dead already", lambda r: r.record_failure("o-91")),
        ("sent already", lambda r: r.record_failure("o-done")),
        ("unknown", lambda r: r.record_failure("o-604")),
        ("query fails", lambda r: r.record_failure("slow-o-91")),
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


async def send():
    db = _db()
    db["outbox"]["o-92"] = {"message_id": "o-92", "user_id": "u-72", "state": "queued",
                           "attempts": 0}
    pool = _CountingPool(db)
    transport = _Transport({"u-throttled"})
    sender = outbox.Sender(outbox.OutboxRepository(pool), transport, slots=3)
    steps = [
        ("accepted", ("o-91", "u-71")),
        ("refused", ("o-92", "u-throttled")),
        ("refused again", ("o-92", "u-throttled")),
        ("vanished from the outbox", ("o-604", "u-71")),
        ("accepted after", ("o-92", "u-72")),
        ("query fails", ("slow-o-99", "u-71")),
        ("refused when dead", ("o-gave-up", "u-throttled")),
        ("accepted last", ("o-done", "u-71")),
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


class _Volume:
    """Blobs by id; "bad-..." opens but fails to read; at most `limit` handles open."""

    def __init__(self, limit=10_000):
        big = media.config.MAX_MEDIA_BYTES + 3
        self.blobs = {
            "jpg": b"\xff\xd8\xff\xe0" + b"j" * 40, "png": b"\x89PNG\r\n" + b"p" * 30,
            "pdf": b"%PDF-1.7" + b"d" * 20, "ogg": b"OggS" + b"o" * 12, "txt": b"plain text",
            "huge": b"%PDF" + b"h" * big,
        }
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


def media_fetch():
    return _media_walk([
        ("small", lambda r: r.fetch("jpg")),
        ("over the limit", lambda r: r.fetch("huge")),
        ("unknown id", lambda r: r.fetch("nope")),
        ("read fails", lambda r: r.fetch("bad-31")),
        ("small again", lambda r: r.fetch("txt")),
        ("over the limit again", lambda r: r.fetch("huge")),
    ])


def media_sniff():
    return _media_walk([
        ("jpeg", lambda r: r.sniff("jpg")),
        ("png", lambda r: r.sniff("png")),
        ("unknown type", lambda r: r.sniff("txt")),
        ("pdf", lambda r: r.sniff("pdf")),
        ("read fails", lambda r: r.sniff("bad-32")),
        ("unknown id", lambda r: r.sniff("nope")),
        ("ogg", lambda r: r.sniff("ogg")),
    ])


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


class _CapiBoundedPool:
    def __init__(self, size, rows):
        self.idle = [_CapiConn(rows) for _ in range(size)]
        self.size, self.in_use, self.exhausted = size, 0, 0

    async def acquire(self):
        for _ in range(300):
            if self.idle:
                self.in_use += 1
                return self.idle.pop()
            await asyncio.sleep(0)
        self.exhausted += 1
        raise pg_store.PoolExhausted(f"timeout acquiring connection: {self.in_use}/{self.size}")

    async def release(self, conn):
        self.in_use -= 1
        self.idle.append(conn)


NOW = 1_719_500_000


def _event(event_id, click="clk-61", days_ago=1):
    return ConversionEvent(event_id, "Purchase", NOW - days_ago * 86400, click, 9_990_000, "BRL")


def _capi_rows():
    return {e.event_id: (e.event_id, e.event_name, e.event_time, e.click_id, e.value_micros,
                         e.currency)
            for e in (_event("e-61"), _event("e-62", "clk-62"), _event("e-aged", "clk-61", 40))}


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


async def capi_insert_event():
    return await _capi_walk([
        ("new", lambda s: s.insert_event(_event("e-63"))),
        ("advertiser retry", lambda s: s.insert_event(_event("e-63"))),
        ("stored before", lambda s: s.insert_event(_event("e-61"))),
        ("query fails", lambda s: s.insert_event(_event("slow-e-64"))),
        ("new again", lambda s: s.insert_event(_event("e-65", "clk-69"))),
    ])


async def capi_insert_batch():
    return await _capi_walk([
        ("new batch", lambda s: s.insert_batch([_event("b-51"), _event("b-52")])),
        ("retried batch", lambda s: s.insert_batch([_event("b-51"), _event("b-53")])),
        ("empty batch", lambda s: s.insert_batch([])),
        ("query fails mid-batch", lambda s: s.insert_batch([_event("b-54"), _event("slow-b-55")])),
        ("batch after", lambda s: s.insert_batch([_event("b-56")])),
    ])


async def capi_count_for_click():
    return await _capi_walk([
        ("two conversions", lambda s: s.count_for_click("clk-61")),
        ("one", lambda s: s.count_for_click("clk-62")),
        ("unknown click", lambda s: s.count_for_click("clk-604")),
        ("query fails", lambda s: s.count_for_click("slow-clk-61")),
        ("one again", lambda s: s.count_for_click("clk-62")),
    ])


async def capi_purge_before():
    return await _capi_walk([
        ("past the retention", lambda s: s.purge_before(NOW - 30 * 86400, NOW)),
        ("inside the retention", lambda s: s.purge_before(NOW - 3 * 86400, NOW)),
        ("query fails", lambda s: s.purge_before(-1, NOW)),
        ("nothing left to purge", lambda s: s.purge_before(NOW - 20 * 86400, NOW)),
        ("inside again", lambda s: s.purge_before(NOW, NOW)),
    ])
