"""Unit tests for whatsapp_sync: masking, the repository and the API handlers."""

import asyncio

from whatsapp_sync import (
    ConnectionPool,
    MessageRepository,
    PoolExhausted,
    SyncApi,
    User,
    mask_email,
    mask_phone,
    user_payload,
)
from whatsapp_sync import config, repository

JANE = {
    "user_id": "u-1",
    "display_name": "Jane's Bakery",
    "phone": "+44 7700 900123",
    "email": "jane.doe@example.com",
    "locale": "en_GB",
    "opted_in": True,
}


class FakeConnection:
    """Answers the repository's queries from dicts, yielding once per call like real I/O."""

    def __init__(self, users, messages):
        self.users, self.messages = users, messages

    async def fetch_one(self, query, *args):
        await asyncio.sleep(0)
        if query == repository.SELECT_USER:
            return self.users.get(args[0])
        if query == repository.SELECT_MESSAGE:
            return self.messages.get(args[0])
        raise AssertionError(f"unexpected query {query!r}")

    async def execute(self, query, *args):
        await asyncio.sleep(0)
        if query == repository.INSERT_MESSAGE:
            self.messages[args[0]] = {"message_id": args[0], "status": "received"}
        elif query == repository.UPDATE_STATUS:
            self.messages[args[0]]["status"] = args[1]
        else:
            raise AssertionError(f"unexpected query {query!r}")
        return 1


class FakePool:
    """Hands out one shared fake connection up to `size` times at once."""

    def __init__(self, size=5):
        self.size, self.in_use = size, 0
        self.conn = FakeConnection({"u-1": dict(JANE)}, {})

    async def acquire(self):
        if self.in_use >= self.size:
            raise PoolExhausted("timeout acquiring connection")
        self.in_use += 1
        return self.conn

    async def release(self, conn):
        self.in_use -= 1


def _api():
    return SyncApi(MessageRepository(FakePool()))


def test_mask_phone_keeps_last_two_digits():
    assert mask_phone("+44 7700 900123") == "**********23"
    assert mask_phone("12") == "12"


def test_mask_email_keeps_first_letter_and_domain():
    assert mask_email("jane.doe@example.com") == "j***@example.com"
    assert mask_email("not-an-email") == "***"


def test_user_payload_masks_unless_revealed():
    user = User(**JANE)
    masked = user_payload(user, reveal_pii=False)
    assert masked["phone"] == "**********23" and masked["email"] == "j***@example.com", masked
    assert user_payload(user, reveal_pii=True)["email"] == JANE["email"]


async def test_connection_pool_is_bounded():
    async def connect():
        return object()

    pool = ConnectionPool(connect, size=1, acquire_timeout=0)
    await pool.acquire()
    try:
        await pool.acquire()
    except PoolExhausted as exc:
        assert "timeout acquiring connection" in str(exc), exc
    else:
        raise AssertionError("a second acquire on a pool of one must fail while the first is out")


async def test_connection_pool_reuses_released_connections():
    opened = []

    async def connect():
        opened.append(object())
        return opened[-1]

    pool = ConnectionPool(connect, size=2)
    first = await pool.acquire()
    await pool.release(first)
    assert await pool.acquire() is first, "an idle connection must be reused"
    assert len(opened) == 1 and pool.in_use == 1, (opened, pool.in_use)


async def test_get_profile():
    api = _api()
    response = await api.get_profile("u-1")
    assert response["status"] == 200, response
    assert response["body"]["display_name"] == "Jane's Bakery", response
    assert (await api.get_profile("u-404"))["status"] == 404


async def test_support_scope_sees_raw_contact_details():
    response = await _api().get_profile("u-1", scopes={config.PII_SCOPE})
    assert response["body"]["phone"] == JANE["phone"], response


async def test_inbound_webhook_is_idempotent():
    api = _api()
    payload = {"message_id": "m-1", "from": "u-1", "text": "hi", "timestamp": 1_717_000_000}
    first, again = await api.inbound_webhook(payload), await api.inbound_webhook(payload)
    assert first["body"]["duplicate"] is False and again["body"]["duplicate"] is True, again
    assert (await api.inbound_webhook({"from": "u-1"}))["status"] == 400


async def test_status_webhook():
    api = _api()
    await api.inbound_webhook({"message_id": "m-1", "from": "u-1", "timestamp": 1})
    update = {"message_id": "m-1", "status": "read", "timestamp": 2}
    assert (await api.status_webhook(update))["body"]["changed"] is True
    assert (await api.status_webhook(update))["body"]["changed"] is False
    assert (await api.status_webhook({**update, "message_id": "m-404"}))["status"] == 404
    assert (await api.status_webhook({**update, "status": "seen"}))["status"] == 400
