"""Grader checks for meta-sre/ad-ranking-crash-v1 (never shown to agents).

FAIL_TO_PASS: ranking works again on plain dict feature rows, with {{feature_key}} still
weighing the score. PASS_TO_PASS: what worked before keeps working, in particular that
malformed input is still refused (a blanket try/except in the ranker is a regression).
"""

import asyncio

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


# --- FAIL_TO_PASS -------------------------------------------------------------------------


def test_rank_scores_dict_feature_rows():
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
    ranked = rank_ads(candidates, rows)
    expected = {"ad-1": 3_000_000 * 0.02 * 0.10 * 0.25, "ad-2": 1_000_000 * 0.02 * 0.10,
                "ad-3": 2_000_000 * 0.01 * 0.05 * 0.8 * 0.9}
    assert [ad.ad_id for ad in ranked] == ["ad-2", "ad-1", "ad-3"], ranked
    for ad in ranked:
        assert abs(ad.score - expected[ad.ad_id]) < 1e-3, (ad, expected[ad.ad_id])


def test_rank_endpoint_serves_valid_requests():
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
    assert response["status"] == 200, response
    assert [ad["ad_id"] for ad in response["ads"]] == ["ad-a", "ad-b"], response


# --- PASS_TO_PASS -------------------------------------------------------------------------


def test_rank_still_rejects_a_row_missing_a_feature():
    row = _row(0.02, 0.10)
    del row["pctr"]
    try:
        rank_ads([AdCandidate("ad-x", "c-1", 1_000_000)], {"ad-x": row})
    except RankingError as exc:
        assert "pctr" in str(exc) and "ad-x" in str(exc), exc
    else:
        raise AssertionError("a feature row without pctr must raise RankingError, not be scored")


def test_rank_endpoint_still_answers_400_to_bad_requests():
    store = InMemoryFeatureStore([AdStats("ad-a", 100, 1, 0)])
    unknown = {"candidates": [{"ad_id": "ad-zzz", "campaign_id": "c", "bid_micros": 1}]}
    negative = {"candidates": [{"ad_id": "ad-a", "campaign_id": "c", "bid_micros": -5}]}
    for payload in ({"candidates": "ad-a"}, {"limit": 3}, unknown, negative):
        response = handle_rank_request(payload, store)
        assert response["status"] == 400 and response.get("error"), (payload, response)


def test_attribution_window_unchanged():
    clicks = [Click("k1", "ad-a", 1_000_000), Click("k2", "ad-b", 1_000_000)]
    conversions = [
        ConversionEvent("e1", "Purchase", 1_000_000 + 86_400, "k1", 0, "USD"),
        ConversionEvent("e2", "Purchase", 1_000_000 + 8 * 86_400, "k1", 0, "USD"),
        ConversionEvent("e3", "Lead", 1_000_000 + 60, "k2", 0, "USD"),
        ConversionEvent("e4", "Lead", 999_000, "k2", 0, "USD"),
    ]
    assert attribute_conversions(clicks, conversions) == {"ad-a": 1, "ad-b": 1}


def test_capi_ingest_unchanged():
    store = InMemoryEventStore()
    batch = [
        {"event_id": "x1", "event_name": "Purchase", "event_time": 1_717_000_000_500,
         "value": 5, "currency": "usd"},
        {"event_id": "x1", "event_name": "Purchase", "event_time": 1_717_000_000_500},
        {"event_id": "x2", "event_name": "Refund", "event_time": 1_717_000_000},
    ]
    result = ConversionIngestor(store).ingest(batch)
    assert (result.accepted, result.duplicates, len(result.rejected)) == (1, 1, 1), result
    assert store.all_events()[0].event_time == 1_717_000_000, store.all_events()


def test_whatsapp_sync_unchanged():
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

    async def scenario():
        api = SyncApi(MessageRepository(Pool()))
        profile = await api.get_profile("u-9")
        assert profile["status"] == 200 and "912" not in str(profile), profile
        inbound = {"message_id": "m1", "from": "u-9", "timestamp": 5}
        assert (await api.inbound_webhook(inbound))["body"]["duplicate"] is False
        status = {"message_id": "m1", "status": "read", "timestamp": 6}
        assert (await api.status_webhook(status))["body"]["changed"] is True
        assert (await api.status_webhook({**status, "message_id": "nope"}))["status"] == 404
        assert Pool.out == 0, "connections must all be released"

    asyncio.run(scenario())
