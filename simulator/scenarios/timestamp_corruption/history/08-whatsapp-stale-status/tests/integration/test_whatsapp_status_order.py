"""End to end through the API: delivery statuses keep the newest by WhatsApp's timestamp."""

from whatsapp_sync import MessageRepository, SyncApi, repository

T = 1_772_361_840  # WhatsApp sends epoch seconds, as a string


class _Conn:
    def __init__(self, rows):
        self.rows = rows

    async def fetch_one(self, query, *args):
        row = self.rows.get(args[0])
        return dict(row) if row else None

    async def execute(self, query, *args):
        if query == repository.UPDATE_STATUS:
            self.rows[args[0]].update(status=args[1], updated_at=args[2])
        else:
            self.rows[args[0]] = {"message_id": args[0], "status": "received", "updated_at": args[3]}
        return 1


class _Pool:
    def __init__(self):
        self.conn = _Conn({})

    async def acquire(self):
        return self.conn

    async def release(self, conn):
        return None


async def test_a_late_delivered_does_not_overwrite_read():
    pool = _Pool()
    api = SyncApi(MessageRepository(pool))
    await api.inbound_webhook({"message_id": "m1", "from": "u-1", "timestamp": str(T)})
    for status, at in (("sent", T + 5), ("read", T + 90), ("delivered", T + 30)):
        await api.status_webhook({"message_id": "m1", "status": status, "timestamp": str(at)})
    assert pool.conn.rows["m1"]["status"] == "read", pool.conn.rows
    assert pool.conn.rows["m1"]["updated_at"] == T + 90, pool.conn.rows
