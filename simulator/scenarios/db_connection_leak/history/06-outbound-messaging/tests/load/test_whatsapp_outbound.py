"""Peak-load tests of the outbound paths (templates, opt-outs, the outbox and its sender) and
of every repository call when a query fails: whatever path a call takes, every pooled
connection and every send slot it took is given back.

The fakes are deterministic: a query whose first argument starts with "slow-" fails the way a
statement timeout does, and a waiting acquire() gives up after MAX_WAIT_TURNS loop turns.
"""

import asyncio

from whatsapp_sync import MessageRepository, PoolExhausted
from whatsapp_sync import optouts, outbox, repository, templates

POOL_SIZE = 10
MAX_WAIT_TURNS = 200


class StatementTimeout(RuntimeError):
    """What the driver raises when postgres cancels a statement."""


class FakeConnection:
    """Serves every table from shared dicts; one loop turn per query, like I/O."""

    def __init__(self, db):
        self.db = db

    async def fetch_one(self, query, *args):
        await asyncio.sleep(0)
        if str(args[0]).startswith("slow-"):
            raise StatementTimeout("canceling statement due to statement timeout")
        if query == templates.SELECT_TEMPLATE:
            row = self.db["templates"].get((args[0], args[1]))
        elif query == optouts.SELECT_OPT_OUT:
            row = self.db["optouts"].get(args[0])
        elif query == outbox.SELECT_OUTBOX:
            row = self.db["outbox"].get(args[0])
        elif query == repository.SELECT_USER:
            row = self.db["users"].get(args[0])
        else:
            row = self.db["messages"].get(args[0])
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
        return 1


class BoundedFakePool:
    """At most `size` connections out at once; acquire waits a bounded number of turns."""

    def __init__(self, size, db):
        self.idle = [FakeConnection(db) for _ in range(size)]
        self.size = size
        self.in_use = 0
        self.exhausted = 0

    async def acquire(self):
        for _ in range(MAX_WAIT_TURNS):
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
    return {
        "users": {"u-1": {"user_id": "u-1", "display_name": "Shop", "phone": "+1 555 0100",
                          "email": "owner@shop.example", "locale": "en_US", "opted_in": True}},
        "messages": {"m-1": {"message_id": "m-1", "status": "delivered"}},
        "templates": {
            ("promo", "en_US"): {"name": "promo", "locale": "en_US", "body": "Hi",
                                 "status": "approved"},
            ("promo", "pt_BR"): {"name": "promo", "locale": "pt_BR", "body": "Oi",
                                 "status": "pending"},
        },
        "optouts": {"u-stop": {"user_id": "u-stop", "opted_out_at": 1, "reason": "STOP"}},
        "outbox": {"o-sent": {"message_id": "o-sent", "user_id": "u-1", "state": "sent",
                              "attempts": 0}},
    }


async def _settle(calls):
    return await asyncio.gather(*calls, return_exceptions=True)


def _peak(make_calls):
    async def run():
        pool = BoundedFakePool(POOL_SIZE, _db())
        results = await _settle(make_calls(pool))
        return pool, results
    return asyncio.run(run())


def _unexpected(results):
    return [r for r in results if isinstance(r, BaseException)
            and not isinstance(r, (StatementTimeout, LookupError))]


def _check(pool, results, what):
    bad = _unexpected(results)
    assert not bad, (
        f"{what}: {len(bad)} calls failed, {pool.exhausted} could not get a connection (pool of"
        f" {pool.size}, {pool.in_use} still checked out); first: {bad[0]!r}"
    )
    assert pool.in_use == 0, (
        f"{what}: {pool.in_use} connections still checked out after every call finished: a"
        " code path acquires without releasing"
    )


def test_templates_under_load_give_every_connection_back():
    def calls(pool):
        repo = templates.TemplateRepository(pool)
        out = []
        for i in range(240):
            kind = i % 6
            if kind == 0:
                out.append(repo.get_template("promo", "pt_BR"))
            elif kind == 1:
                out.append(repo.get_template(f"missing-{i}", "de_DE"))
            elif kind == 2:
                out.append(repo.submit_template("promo", "en_US", "Hi", i))
            elif kind == 3:
                out.append(repo.approve_template("promo", "en_US", i))
            elif kind == 4:
                out.append(repo.approve_template(f"never-{i}", "en_US", i))
            else:
                out.append(repo.get_template(f"slow-{i}", "en_US"))
        return out
    _check(*_peak(calls), "templates")


def test_optouts_under_load_give_every_connection_back():
    def calls(pool):
        repo = optouts.OptOutRepository(pool)
        out = []
        for i in range(240):
            kind = i % 5
            if kind == 0:
                out.append(repo.record_opt_out("u-stop", i, "STOP"))
            elif kind == 1:
                out.append(repo.may_message(f"u-{i}"))
            elif kind == 2:
                out.append(repo.opt_back_in(f"u-never-{i}"))
            elif kind == 3:
                out.append(repo.may_message(f"slow-{i}"))
            else:
                out.append(repo.record_opt_out(f"slow-{i}", i, "STOP"))
        return out
    _check(*_peak(calls), "opt-outs")


def test_outbox_under_load_gives_every_connection_back():
    def calls(pool):
        repo = outbox.OutboxRepository(pool)
        out = []
        for i in range(240):
            kind = i % 6
            if kind == 0:
                out.append(repo.enqueue("o-sent", "u-1", "promo", i))
            elif kind == 1:
                out.append(repo.mark_sent("o-sent", i))
            elif kind == 2:
                out.append(repo.mark_sent(f"o-gone-{i}", i))
            elif kind == 3:
                out.append(repo.record_failure("o-sent"))
            elif kind == 4:
                out.append(repo.record_failure(f"o-gone-{i}"))
            else:
                out.append(repo.enqueue(f"slow-{i}", "u-1", "promo", i))
        return out
    _check(*_peak(calls), "outbox")


def test_repository_gives_connections_back_when_queries_fail():
    def calls(pool):
        repo = MessageRepository(pool)
        out = []
        for i in range(180):
            kind = i % 3
            if kind == 0:
                out.append(repo.get_user(f"slow-{i}"))
            elif kind == 1:
                out.append(repo.save_inbound(f"slow-{i}", "u-1", "oi", i))
            else:
                out.append(repo.update_status(f"slow-{i}", "read", i))
        return out
    _check(*_peak(calls), "repository with failing queries")


class FlakyTransport:
    """The Cloud API: refuses every third send."""

    def __init__(self):
        self.calls = 0

    async def post(self, user_id, template):
        await asyncio.sleep(0)
        self.calls += 1
        if self.calls % 3 == 0:
            raise outbox.TransportError("429 too many requests")


def test_sender_gives_every_send_slot_back():
    """Sends the Cloud API refuses, and sends whose outbox row vanished meanwhile (the
    retention job), give their slot back like the others."""
    async def run():
        db = _db()
        for i in range(60):
            db["outbox"][f"o-{i}"] = {"message_id": f"o-{i}", "user_id": "u-1",
                                      "state": "queued", "attempts": 0}
        pool = BoundedFakePool(POOL_SIZE, db)
        sender = outbox.Sender(outbox.OutboxRepository(pool), FlakyTransport(), slots=4)
        states = []
        for start in range(0, 72, 4):
            if sender.free_slots < 4:
                break
            batch = [sender.send(f"o-{i}", "u-1", "promo", i) for i in range(start, start + 4)]
            states += await _settle(batch)
        return sender, pool, states
    sender, pool, states = asyncio.run(run())
    assert len(states) == 72, (
        f"only {len(states)} of 72 sends ran: {4 - sender.free_slots} of 4 send slots were"
        " never given back"
    )
    assert sender.free_slots == 4, f"{4 - sender.free_slots} send slots still held"
    assert pool.in_use == 0, f"{pool.in_use} connections still checked out"
