"""Production traffic of the ads platform: conversions, clicks and message statuses it serves.

Not a hidden check: the world replays these on the current code after each change, logs each
request with its outcome in its service's log, and a service recovers when its requests are
answered as the fixed code answers them (see metasre.simulator.traffic). The hidden checks
use other calls on other inputs.
"""

import asyncio
from datetime import datetime, timedelta, timezone

from ad_ranking import Click, attribute_conversions
from ad_ranking.clicks import clicks_from_log
from capi_pipeline import ConversionEvent, ConversionIngestor, InMemoryEventStore

HOUR = 3600
DAY = 24 * HOUR
T = 1_773_512_345
DELAYS = (25 * 60, 9 * HOUR, 3 * DAY, 6 * DAY + 5 * HOUR, 9 * DAY)

REQUESTS = {
    "server": ["capi_pipeline", "POST /v1/events source=server (5 purchases, seconds)"],
    "server_ms": ["capi_pipeline", "POST /v1/events source=server (5 purchases, milliseconds)"],
    "pixel": ["capi_pipeline", "POST /v1/events source=pixel (5 purchases)"],
    "ios": ["capi_pipeline", "POST /v1/events source=app_ios (5 purchases)"],
    "android": ["capi_pipeline", "POST /v1/events source=app_android tz_offset_minutes=120"],
    "offline": ["capi_pipeline", "POST /v1/events source=offline (ISO times, -04:00)"],
    "offline_account": [
        "capi_pipeline", "POST /v1/events source=offline accounts=act_3107,act_1001 (local times)"
    ],
    "crm": ["capi_pipeline", "POST /v1/events source=crm (microseconds)"],
    "crm_units": ["capi_pipeline", "POST /v1/events source=crm time_unit=ms|s"],
    "commerce": ["capi_pipeline", "POST /v1/events source=commerce_partner"],
    "attribution": ["ad_ranking", "POST /v1/attribution clicks=2 conversions=6"],
    "click_log": ["ad_ranking", "POST /v1/clicks/ingest log=4 entries"],
    "statuses": ["whatsapp_sync", "POST /v1/webhooks/status m-77 sent,read,delivered"],
    "inbound": ["whatsapp_sync", "POST /v1/webhooks/inbound in-7,in-8 + status updates"],
}


def _failed(exc):
    return {"raised": type(exc).__name__}


def _batch(source, write):
    raw = []
    for n, delay in enumerate(DELAYS):
        event = {"event_id": f"{source}-t{n}", "event_name": "Purchase", "click_id": "clk-9",
                 "source": source}
        event.update(write(T + delay))
        raw.append(event)
    store = InMemoryEventStore()
    try:
        result = ConversionIngestor(store).ingest(raw)
    except Exception as exc:  # noqa: BLE001 - a 500 is what the caller sees
        return _failed(exc)
    events = store.all_events()
    return {
        "status": 200,
        "accepted": result.accepted,
        "rejected": len(result.rejected),
        "times": {e.event_id: e.event_time - T for e in events},
    }


def _iso(t, minutes, with_offset=True):
    local = datetime.fromtimestamp(t, timezone(timedelta(minutes=minutes)))
    return local.isoformat() if with_offset else local.replace(tzinfo=None).isoformat()


def server():
    return _batch("server", lambda t: {"event_time": t})


def server_ms():
    return _batch("server", lambda t: {"event_time": t * 1000 + 17})


def pixel():
    return _batch("pixel", lambda t: {"event_time": t * 1000 + 250})


def ios():
    return _batch("app_ios", lambda t: {"event_time": t - 978_307_200 + 0.25})


def android():
    return _batch("app_android",
                  lambda t: {"event_time": (t + 120 * 60) * 1000 + 3, "tz_offset_minutes": 120})


def offline():
    return _batch("offline", lambda t: {"event_time": _iso(t, -240)})


def offline_account():
    return {account: _batch("offline", lambda t, m=minutes, a=account: {
        "event_time": _iso(t, m, with_offset=False), "account_id": a})
        for account, minutes in (("act_3107", 330), ("act_1001", -300))}


def crm():
    return _batch("crm", lambda t: {"event_time": t * 1_000_000 + 42})


def crm_units():
    return {"ms": _batch("crm", lambda t: {"event_time": t * 1000 + 1, "time_unit": "ms"}),
            "s": _batch("crm", lambda t: {"event_time": t, "time_unit": "s"})}


def commerce():
    return _batch("commerce_partner", lambda t: {"event_time": t, "export_time": t + 10 * DAY})


def attribution():
    clicks = [Click("a", "ad-q", T), Click("b", "ad-r", T + 2 * HOUR)]
    conversions = [ConversionEvent(f"v{n}", "Purchase", T + delay, "a", 0, "USD")
                   for n, delay in enumerate((-5, 0, 4 * HOUR, 6 * DAY, 7 * DAY, 7 * DAY + 30))]
    try:
        return {"status": 200, "attributed": dict(attribute_conversions(clicks, conversions))}
    except Exception as exc:  # noqa: BLE001
        return _failed(exc)


def click_log():
    log = [{"kind": "impression", "ad_id": "ad-q", "ts_ms": T * 1000 - 1500},
           {"kind": "click", "click_id": "c-1", "ad_id": "ad-q", "ts_ms": T * 1000 + 120},
           {"kind": "click", "click_id": "c-2", "ad_id": "ad-r", "ts_ms": (T + 5 * HOUR) * 1000},
           {"kind": "click", "click_id": "c-3", "ad_id": "ad-s", "ts": T + 9 * HOUR}]
    try:
        clicks = clicks_from_log(log)
        conversions = [ConversionEvent("w1", "Purchase", T + HOUR, "c-1", 0, "USD"),
                       ConversionEvent("w2", "Lead", T + 2 * DAY, "c-2", 0, "USD"),
                       ConversionEvent("w3", "Subscribe", T + DAY, "c-3", 0, "USD")]
        return {"status": 200,
                "clicks": [[c.click_id, c.ad_id, c.click_time - T] for c in clicks],
                "attributed": dict(attribute_conversions(clicks, conversions))}
    except Exception as exc:  # noqa: BLE001
        return _failed(exc)


def _whatsapp(script):
    from whatsapp_sync import MessageRepository, SyncApi, repository

    rows = {}

    class Conn:
        async def fetch_one(self, query, *args):
            row = rows.get(args[0])
            return dict(row) if row else None

        async def execute(self, query, *args):
            if query == repository.UPDATE_STATUS:
                rows[args[0]].update(status=args[1], updated_at=args[2])
            else:
                rows[args[0]] = {"message_id": args[0], "status": "received",
                                 "updated_at": args[3]}
            return 1

    class Pool:
        async def acquire(self):
            return Conn()

        async def release(self, conn):
            return None

    try:
        answers = asyncio.run(script(SyncApi(MessageRepository(Pool()))))
    except Exception as exc:  # noqa: BLE001
        return _failed(exc)
    return {"status": 200, "answers": answers,
            "rows": {k: [v["status"], v["updated_at"] - T] for k, v in sorted(rows.items())}}


async def _status(api, message_id, status, at):
    answer = await api.status_webhook({"message_id": message_id, "status": status,
                                       "timestamp": str(at)})
    return answer.get("body", {}).get("changed", answer.get("status"))


def statuses():
    async def script(api):
        await api.inbound_webhook({"message_id": "m-77", "from": "u-3", "timestamp": str(T)})
        return [await _status(api, "m-77", "sent", T + 3),
                await _status(api, "m-77", "read", T + 75),
                await _status(api, "m-77", "delivered", T + 20)]

    return _whatsapp(script)


def inbound():
    async def script(api):
        answers = []
        for n, at in ((7, T + 11), (8, T + 2 * DAY)):
            answer = await api.inbound_webhook({"message_id": f"in-{n}", "from": "u-1",
                                                "timestamp": str(at), "text": "ola"})
            answers.append(answer["status"])
        answers.append(await _status(api, "in-7", "read", T + 200))
        answers.append(await _status(api, "in-7", "delivered", T + 12))
        return answers

    return _whatsapp(script)
