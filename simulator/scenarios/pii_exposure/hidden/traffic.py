"""Production traffic of the messaging and conversions services: requests they serve every minute.

Not a hidden check: the world replays these on the current code after each change, logs each
request with its outcome in its service's log, and a service recovers when its requests are
answered as the fixed code answers them (see metasre.simulator.traffic). The hidden checks
use other calls on other inputs.
"""

import contextlib
import logging

from whatsapp_sync import MessageRepository, SyncApi, config, repository
from whatsapp_sync.repository import User

REQUESTS = {
    "profile_inbox": ["whatsapp_sync", "GET /v1/users/u-5120 scopes=[]"],
    "profile_agents": ["whatsapp_sync", "GET /v1/users/u-5120 scopes=[messages:read]"],
    "profile_admin": ["whatsapp_sync", "GET /v1/users/u-5120 scopes=[admin, messages:read]"],
    "profile_support_read": ["whatsapp_sync", "GET /v1/users/u-5120 scopes=[support:read]"],
    "profile_debug": ["whatsapp_sync", "GET /v1/users/u-5120 scopes=[] (shard debug on)"],
    "contact_card": ["whatsapp_sync", "GET /v1/inbox/contacts/u-5120/card"],
    "search": ["whatsapp_sync", "GET /v1/inbox/search?q=Padaria"],
    "export": ["whatsapp_sync", "POST /v1/inbox/export contacts=[u-5120]"],
    "notification": ["whatsapp_sync", "POST /v1/inbox/notify from=u-5120"],
    "conversions": ["capi_pipeline", "POST /v1/events events=[k-1 all keys, k-2 XXX currency, k-3 malformed em]"],
}

USER = {"user_id": "u-5120", "display_name": "Padaria Sol", "phone": "+55 11 98765 4321",
        "email": "contato@padariasol.example", "locale": "pt_BR", "opted_in": True}
CUSTOMER = {"em": "rafa.lima@correio.example", "ph": "+55 21 99876 1234",
            "external_id": "crm-88213"}


class _Conn:
    async def fetch_one(self, query, *args):
        if query == repository.SELECT_USER:
            return dict(USER) if args[0] == USER["user_id"] else None
        return None

    async def execute(self, query, *args):
        return 1


class _Pool:
    async def acquire(self):
        return _Conn()

    async def release(self, conn):
        pass


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        fields = {k: str(v) for k, v in sorted(vars(record).items()) if k not in _STANDARD}
        self.lines.append([record.getMessage(), fields])


_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


@contextlib.contextmanager
def _logs(name):
    logger = logging.getLogger(name)
    handler, level = _Capture(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _served(call):
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - a 500 is what the caller sees
        return {"raised": type(exc).__name__}


async def _profile(scopes=(), debug=False):
    saved = config.DEBUG
    config.DEBUG = debug
    try:
        with _logs("whatsapp_sync") as lines:
            response = await SyncApi(MessageRepository(_Pool())).get_profile(
                USER["user_id"], scopes
            )
    except Exception as exc:  # noqa: BLE001
        return {"raised": type(exc).__name__}
    finally:
        config.DEBUG = saved
    return {"status": response.get("status"), "response": response, "logged": lines}


async def profile_inbox():
    return await _profile()


async def profile_agents():
    return await _profile({"messages:read"})


async def profile_admin():
    return await _profile({"messages:read", "admin"})


async def profile_support_read():
    return await _profile({"support:read"})


async def profile_debug():
    return await _profile(debug=True)


def contact_card():
    from whatsapp_sync.contacts import contact_card

    return _served(lambda: {"status": 200, "cards": [contact_card(User(**USER)),
                                                     contact_card(User(**USER), {"admin"})]})


def search():
    from whatsapp_sync.contacts import search_hit

    return _served(lambda: {"status": 200, "hits": [search_hit(User(**USER))]})


def export():
    from whatsapp_sync.contacts import export_row

    return _served(lambda: {"status": 200, "rows": [export_row(User(**USER)),
                                                    export_row(User(**USER), {"support:write"})]})


def notification():
    from whatsapp_sync.contacts import notification

    return _served(lambda: {"status": 200, "notification": notification(
        User(**USER), "Bom dia, vocês abrem no feriado?")})


def conversions():
    from capi_pipeline.match_keys import MatchKeyIngestor, match_keys

    base = {"event_name": "Purchase", "event_time": 1_718_000_000, "value": 30,
            "currency": "BRL"}
    batch = [{**base, "event_id": "k-1", "user_data": dict(CUSTOMER)},
             {**base, "event_id": "k-2", "currency": "XXX", "user_data": dict(CUSTOMER)},
             {**base, "event_id": "k-3",
              "user_data": {"em": CUSTOMER["em"].replace("@", "@@"), "ph": CUSTOMER["ph"]}}]

    def call():
        ingestor = MatchKeyIngestor()
        with _logs("capi_pipeline") as lines:
            accepted, rejected = ingestor.ingest(batch)
        return {"status": 200, "accepted": accepted, "rejected": rejected,
                "rows": ingestor.rows, "logged": lines,
                "keys": dict(sorted(match_keys(dict(CUSTOMER)).items()))}

    return _served(call)
