"""Grader probes for meta-sre/ad-ranking-crash-v1 (never shown to agents).

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

FAIL_TO_PASS: ranking of plain dict feature rows, with {{feature_key}} still weighing the
score. PASS_TO_PASS: what worked before, in particular that malformed input is still refused
(a blanket try/except in the ranker is a regression).
"""

from ad_ranking import (
    AdCandidate,
    AdStats,
    Click,
    InMemoryFeatureStore,
    RankingError,
    attribute_conversions,
    handle_rank_request,
    rank_ads,
)
from capi_pipeline import ConversionEvent, ConversionIngestor, InMemoryEventStore


def _row(pctr, pcvr, quality=1.0, signal=1.0):
    row = {"pctr": pctr, "pcvr": pcvr, "quality": quality, "relevance": 1.0,
           "freshness": 1.0, "brand_safety": 1.0}
    row["{{feature_key}}"] = signal
    return row


def _ranked(ranked):
    return {"order": [ad.ad_id for ad in ranked],
            "scores": {ad.ad_id: round(ad.score, 6) for ad in ranked}}


# --- FAIL_TO_PASS -------------------------------------------------------------------------


def rank_scores_dict_feature_rows():
    rows = {
        "ad-1": _row(0.02, 0.10, signal=0.25),
        "ad-2": _row(0.02, 0.10, signal=1.0),
        "ad-3": _row(0.01, 0.05, quality=0.8, signal=0.9),
    }
    candidates = [
        AdCandidate("ad-1", "c-1", 3_000_000),
        AdCandidate("ad-2", "c-1", 1_000_000),
        AdCandidate("ad-3", "c-2", 2_000_000),
    ]
    return _ranked(rank_ads(candidates, rows))


def rank_endpoint_serves_valid_requests():
    store = InMemoryFeatureStore([
        AdStats("ad-a", impressions=10_000, clicks=300, attributed_conversions=30),
        AdStats("ad-b", impressions=10_000, clicks=300, attributed_conversions=30,
                **{"{{feature_key}}": 0.5}),
    ])
    payload = {"candidates": [
        {"ad_id": "ad-b", "campaign_id": "c-1", "bid_micros": 1_500_000},
        {"ad_id": "ad-a", "campaign_id": "c-2", "bid_micros": 1_000_000},
    ]}
    response = handle_rank_request(payload, store)
    ads = response.get("ads") or []
    return {
        "status": response["status"],
        "order": [ad["ad_id"] for ad in ads],
        "scores": {ad["ad_id"]: round(ad["score"], 6) for ad in ads},
    }


# --- PASS_TO_PASS -------------------------------------------------------------------------


def rank_still_rejects_a_row_missing_a_feature():
    row = _row(0.02, 0.10)
    del row["pctr"]
    try:
        ranked = rank_ads([AdCandidate("ad-x", "c-1", 1_000_000)], {"ad-x": row})
    except RankingError as exc:
        return {"raised": type(exc).__name__, "names_pctr": "pctr" in str(exc),
                "names_ad": "ad-x" in str(exc)}
    return {"raised": None, "ranked": _ranked(ranked)}


def rank_endpoint_still_answers_400_to_bad_requests():
    store = InMemoryFeatureStore([AdStats("ad-a", 100, 1, 0)])
    unknown = {"candidates": [{"ad_id": "ad-zzz", "campaign_id": "c", "bid_micros": 1}]}
    negative = {"candidates": [{"ad_id": "ad-a", "campaign_id": "c", "bid_micros": -5}]}
    observed = []
    for payload in ({"candidates": "ad-a"}, {"limit": 3}, unknown, negative):
        response = handle_rank_request(payload, store)
        observed.append({"status": response["status"], "has_error": bool(response.get("error"))})
    return observed


def attribution_window_unchanged():
    clicks = [Click("k1", "ad-a", 1_000_000), Click("k2", "ad-b", 1_000_000)]
    conversions = [
        ConversionEvent("e1", "Purchase", 1_000_000 + 86_400, "k1", 0, "USD"),
        ConversionEvent("e2", "Purchase", 1_000_000 + 8 * 86_400, "k1", 0, "USD"),
        ConversionEvent("e3", "Lead", 1_000_000 + 60, "k2", 0, "USD"),
        ConversionEvent("e4", "Lead", 999_000, "k2", 0, "USD"),
    ]
    return dict(attribute_conversions(clicks, conversions))


def capi_ingest_unchanged():
    store = InMemoryEventStore()
    batch = [
        {"event_id": "x1", "event_name": "Purchase", "event_time": 1_717_000_000_500,
         "value": 5, "currency": "usd"},
        {"event_id": "x1", "event_name": "Purchase", "event_time": 1_717_000_000_500},
        {"event_id": "x2", "event_name": "Refund", "event_time": 1_717_000_000},
    ]
    result = ConversionIngestor(store).ingest(batch)
    events = store.all_events()
    return {
        "accepted": result.accepted,
        "duplicates": result.duplicates,
        "rejected": len(result.rejected),
        "first_event_time": events[0].event_time if events else None,
    }


async def whatsapp_sync_unchanged():
    from whatsapp_sync import MessageRepository, SyncApi, repository

    user = {"user_id": "u-9", "display_name": "Loja", "phone": "+351 912 345 678",
            "email": "ana@loja.example", "locale": "pt_PT", "opted_in": False}
    messages = {}

    class Conn:
        async def fetch_one(self, query, *args):
            if query == repository.SELECT_USER:
                return dict(user) if args[0] == "u-9" else None
            return messages.get(args[0])

        async def execute(self, query, *args):
            status = args[1] if query == repository.UPDATE_STATUS else "received"
            messages[args[0]] = {"message_id": args[0], "status": status}
            return 1

    class Pool:
        out = 0

        async def acquire(self):
            Pool.out += 1
            return Conn()

        async def release(self, conn):
            Pool.out -= 1

    api = SyncApi(MessageRepository(Pool()))
    profile = await api.get_profile("u-9")
    inbound = {"message_id": "m1", "from": "u-9", "timestamp": 5}
    inbound_answer = await api.inbound_webhook(inbound)
    status = {"message_id": "m1", "status": "read", "timestamp": 6}
    status_answer = await api.status_webhook(status)
    unknown_answer = await api.status_webhook({**status, "message_id": "nope"})
    return {
        "profile_status": profile["status"],
        "profile_shows_phone": "912" in str(profile),
        "inbound_duplicate": inbound_answer.get("body", {}).get("duplicate"),
        "status_changed": status_answer.get("body", {}).get("changed"),
        "unknown_message_status": unknown_answer["status"],
        "connections_out": Pool.out,
    }
