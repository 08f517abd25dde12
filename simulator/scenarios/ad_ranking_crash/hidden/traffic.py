"""Production traffic of the ads platform: the requests its services serve every minute.

Not a hidden check: the world replays these on the current code after each change, logs each
request with its outcome in its service's log, and a service recovers when its requests are
answered as the fixed code answers them (see metasre.simulator.traffic). The hidden checks
use other calls on other inputs.
"""

import asyncio

from ad_ranking import AdStats, InMemoryFeatureStore, handle_rank_request
from capi_pipeline import ConversionIngestor, InMemoryEventStore

REQUESTS = {
    "rank_two": ["ad_ranking", "POST /v1/rank candidates=[ad-a c-1 1000000, ad-b c-2 1500000]"],
    "rank_unknown": [
        "ad_ranking", "POST /v1/rank candidates=[ad-a c-1 1000000, ad-7731 c-3 900000]"
    ],
    "rank_new": ["ad_ranking", "POST /v1/rank candidates=[ad-new c-1 800000, ad-a c-1 1000000]"],
    "rank_string_bids": [
        "ad_ranking", "POST /v1/rank candidates=[ad-a c-1 '1200000', ad-b c-2 '3000000']"
    ],
    "rank_zero_quality": [
        "ad_ranking", "POST /v1/rank candidates=[ad-a c-1 1000000, ad-c c-2 2000000]"
    ],
    "ingest": ["capi_pipeline", "POST /v1/events events=[e1 Purchase 12 USD, e2 Lead 0 USD]"],
    "ingest_null_currency": [
        "capi_pipeline", "POST /v1/events events=[e1 Purchase 12 USD, e2 Purchase currency=null]"
    ],
    "ingest_null_click": [
        "capi_pipeline", "POST /v1/events events=[e1 Purchase 12 USD, e2 Purchase click_id=null]"
    ],
    "ingest_page_view": [
        "capi_pipeline", "POST /v1/events events=[e1 Purchase 12 USD, e2 PageView]"
    ],
    "ingest_eur": ["capi_pipeline", "POST /v1/events events=[e1 Purchase 19.99 eur]"],
    "profile": ["whatsapp_sync", "GET /v1/users/u-1"],
    "profile_mail_only": ["whatsapp_sync", "GET /v1/users/u-2"],
    "profile_phone_only": ["whatsapp_sync", "GET /v1/users/u-3"],
    "profile_unknown": ["whatsapp_sync", "GET /v1/users/u-404"],
    "template_order_shipped": [
        "whatsapp_sync", "POST /v1/messages/template to=u-1 template=order_shipped"
    ],
    "template_otp": ["whatsapp_sync", "POST /v1/messages/template to=u-3 template=otp"],
}

STORE = [
    AdStats("ad-a", impressions=10_000, clicks=300, attributed_conversions=30),
    AdStats("ad-b", impressions=20_000, clicks=150, attributed_conversions=12, quality=0.9),
    AdStats("ad-c", impressions=10_000, clicks=300, attributed_conversions=30, quality=0.0),
    AdStats("ad-new", impressions=0, clicks=0, attributed_conversions=0),
]


def _failed(exc):
    return {"raised": type(exc).__name__}


def _rank(*candidates):
    payload = {
        "candidates": [{"ad_id": a, "campaign_id": c, "bid_micros": b} for a, c, b in candidates]
    }
    try:
        response = handle_rank_request(payload, InMemoryFeatureStore(STORE))
    except Exception as exc:  # noqa: BLE001 - a 500 is what the caller sees
        return _failed(exc)
    return {
        "status": response.get("status"),
        "ads": [
            [ad.get("ad_id"), ad.get("campaign_id"), round(ad.get("score", 0), 6),
             ad.get("price_micros")]
            for ad in response.get("ads") or []
        ],
    }


def rank_two():
    return _rank(("ad-a", "c-1", 1_000_000), ("ad-b", "c-2", 1_500_000))


def rank_unknown():
    return _rank(("ad-a", "c-1", 1_000_000), ("ad-7731", "c-3", 900_000))


def rank_new():
    return _rank(("ad-new", "c-1", 800_000), ("ad-a", "c-1", 1_000_000))


def rank_string_bids():
    return _rank(("ad-a", "c-1", "1200000"), ("ad-b", "c-2", "3000000"))


def rank_zero_quality():
    return _rank(("ad-a", "c-1", 1_000_000), ("ad-c", "c-2", 2_000_000))


def _event(event_id, **fields):
    raw = {"event_id": event_id, "event_name": "Purchase", "event_time": 1_772_000_000,
           "value": 12, "currency": "USD", "click_id": "clk-1"}
    raw.update(fields)
    return raw


def _ingest(*batch):
    store = InMemoryEventStore()
    try:
        result = ConversionIngestor(store).ingest(list(batch))
    except Exception as exc:  # noqa: BLE001
        return _failed(exc)
    return {
        "status": 200,
        "accepted": result.accepted,
        "duplicates": result.duplicates,
        "rejected": len(result.rejected),
        "value_usd_micros": result.value_usd_micros,
        "events": [[e.event_id, e.currency, e.click_id, e.value_micros]
                   for e in store.all_events()],
    }


def ingest():
    return _ingest(_event("e1"), _event("e2", event_name="Lead", value=0))


def ingest_null_currency():
    return _ingest(_event("e1"), _event("e2", currency=None))


def ingest_null_click():
    return _ingest(_event("e1"), _event("e2", click_id=None))


def ingest_page_view():
    return _ingest(_event("e1"), _event("e2", event_name="PageView"))


def ingest_eur():
    return _ingest(_event("e1", currency="eur", value=19.99))


USERS = {
    "u-1": {"user_id": "u-1", "display_name": "Loja", "phone": "+351 912 345 678",
            "email": "ana@loja.example", "locale": "pt_PT", "opted_in": False},
    "u-2": {"user_id": "u-2", "display_name": "Mail", "phone": None,
            "email": "zoe@mail.example", "locale": "en_GB", "opted_in": True},
    "u-3": {"user_id": "u-3", "display_name": "Tel", "phone": "+1 415 555 0199", "email": "",
            "locale": "en_US", "opted_in": True},
}


def _whatsapp(call):
    from whatsapp_sync import MessageRepository, SyncApi

    class Conn:
        async def fetch_one(self, query, *args):
            row = USERS.get(args[0])
            return dict(row) if row else None

        async def execute(self, query, *args):
            return 1

    class Pool:
        async def acquire(self):
            return Conn()

        async def release(self, conn):
            pass

    api = SyncApi(MessageRepository(Pool()))
    try:
        return asyncio.run(call(api))
    except Exception as exc:  # noqa: BLE001
        return _failed(exc)


def profile():
    return _whatsapp(lambda api: api.get_profile("u-1"))


def profile_mail_only():
    return _whatsapp(lambda api: api.get_profile("u-2"))


def profile_phone_only():
    return _whatsapp(lambda api: api.get_profile("u-3"))


def profile_unknown():
    return _whatsapp(lambda api: api.get_profile("u-404"))


def template_order_shipped():
    return _whatsapp(lambda api: api.send_template(
        {"to": "u-1", "template": "order_shipped", "params": ["Ana", "#A-1182", "Friday"]}))


def template_otp():
    return _whatsapp(lambda api: api.send_template(
        {"to": "u-3", "template": "otp", "params": [730114]}))
