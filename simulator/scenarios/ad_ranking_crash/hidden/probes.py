"""Grader probes for meta-sre/ad-ranking-crash-v2 (never shown to agents).

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

The family's seed picks the crashing site, so the probes cover every site: the ones that reach
this seed's site are its FAIL_TO_PASS checks (from the seed's fault table; this module does not name them), and the
three `*_unchanged` probes run all the others as PASS_TO_PASS, so a fix that breaks another
site, or swallows errors that must stay errors, is a regression.
"""

import inspect

from ad_ranking import (
    AdCandidate,
    AdStats,
    Click,
    InMemoryFeatureStore,
    RankedAd,
    RankingError,
    attribute_conversions,
    build_features,
    handle_rank_request,
    rank_ads,
)
from ad_ranking.auction import clearing_prices
from capi_pipeline import ConversionEvent, ConversionIngestor, InMemoryEventStore, InvalidEvent
from capi_pipeline import normalize_event



def _raised(exc):
    return {"raised": type(exc).__name__}


def _ranked(ranked):
    return {"order": [ad.ad_id for ad in ranked],
            "scores": {ad.ad_id: round(ad.score, 6) for ad in ranked}}


def _row(pctr, pcvr, quality=1.0):
    return {"pctr": pctr, "pcvr": pcvr, "quality": quality, "relevance": 1.0,
            "freshness": 1.0, "brand_safety": 1.0}


def _store():
    return InMemoryFeatureStore([
        AdStats("ad-a", impressions=10_000, clicks=300, attributed_conversions=30),
        AdStats("ad-b", impressions=20_000, clicks=150, attributed_conversions=12, quality=0.9),
        AdStats("ad-c", impressions=10_000, clicks=300, attributed_conversions=30, quality=0.0),
        AdStats("ad-d", impressions=4_000, clicks=90, attributed_conversions=3, quality=0.7),
        AdStats("ad-new", impressions=0, clicks=0, attributed_conversions=0),
    ])


def _endpoint(payload, store=None):
    try:
        response = handle_rank_request(payload, store or _store())
    except Exception as exc:  # noqa: BLE001 - what escaped the handler is the observation
        return _raised(exc)
    ads = response.get("ads") or []
    return {
        "status": response["status"],
        "has_error": bool(response.get("error")),
        "ads": [[ad["ad_id"], ad["campaign_id"], round(ad["score"], 6), ad["price_micros"]]
                for ad in ads],
    }


def _candidate(ad_id, campaign_id, bid):
    return {"ad_id": ad_id, "campaign_id": campaign_id, "bid_micros": bid}


# --- ad_ranking -----------------------------------------------------------------------------


def rank_scores_feature_rows():
    rows = {
        "ad-1": _row(0.02, 0.10, quality=0.25),
        "ad-2": _row(0.02, 0.10),
        "ad-3": _row(0.01, 0.05, quality=0.8),
        "ad-4": _row(0.03, 0.02, quality=0.6),
    }
    candidates = [
        AdCandidate("ad-1", "c-1", 3_000_000),
        AdCandidate("ad-2", "c-1", 1_000_000),
        AdCandidate("ad-3", "c-2", 2_000_000),
        AdCandidate("ad-4", "c-3", 2_500_000),
    ]
    try:
        ranked = rank_ads(candidates, rows)
        limited = rank_ads(candidates, rows, limit=2)
    except Exception as exc:  # noqa: BLE001
        return _raised(exc)
    return {"all": _ranked(ranked), "top2": _ranked(limited),
            "campaigns": [ad.campaign_id for ad in ranked]}


def rank_refuses_ads_it_cannot_score():
    rows = {"ad-1": _row(0.02, 0.10), "ad-2": _row(0.02, 0.10)}
    del rows["ad-2"]["pcvr"]
    observed = []
    for ad_id in ("ad-1", "ad-2", "ad-zzz"):
        try:
            ranked = rank_ads([AdCandidate(ad_id, "c-1", 1_000_000)], rows)
        except RankingError as exc:
            observed.append({"raised": type(exc).__name__, "names_ad": ad_id in str(exc)})
        except Exception as exc:  # noqa: BLE001
            observed.append(_raised(exc))
        else:
            observed.append(_ranked(ranked))
    return observed


def rank_endpoint_prices_winners():
    payload = {"candidates": [
        _candidate("ad-b", "c-1", 1_500_000),
        _candidate("ad-a", "c-2", 1_000_000),
        _candidate("ad-d", "c-2", 2_000_000),
        _candidate("ad-c", "c-3", 900_000),
    ]}
    return {"all": _endpoint(payload), "top2": _endpoint({**payload, "limit": 2})}


def rank_endpoint_reads_string_bids():
    payload = {"candidates": [
        _candidate("ad-a", "c-1", "1200000"),
        _candidate("ad-b", "c-2", "3000000"),
        _candidate("ad-d", "c-3", 700_000),
    ]}
    return _endpoint(payload)


def rank_endpoint_new_and_unknown_ads():
    new = {"candidates": [_candidate("ad-new", "c-1", 800_000), _candidate("ad-a", "c-1", 500_000)]}
    unknown = {"candidates": [_candidate("ad-a", "c-1", 500_000), _candidate("ad-gone", "c-2", 1)]}
    return {"new": _endpoint(new), "unknown": _endpoint(unknown)}


def rank_endpoint_answers_400_to_bad_requests():
    observed = []
    for payload in ({"candidates": "ad-a"}, {"limit": 3}, {"candidates": []},
                    {"candidates": [_candidate("ad-a", "c", -5)]},
                    {"candidates": [{"ad_id": "ad-a", "campaign_id": "c"}]}):
        result = _endpoint(payload)
        observed.append({k: result.get(k) for k in ("status", "has_error", "raised")})
    return observed


def clearing_prices_cover_every_position():
    ranked = [RankedAd("ad-1", "c-1", 90.0), RankedAd("ad-2", "c-1", 45.5),
              RankedAd("ad-3", "c-2", 12.25), RankedAd("ad-4", "c-2", 0.0)]
    bids = {"ad-1": 3_000_000, "ad-2": 2_000_000, "ad-3": 5_000, "ad-4": 700_000}
    observed = {}
    for count in (1, 2, 4):
        try:
            observed[str(count)] = clearing_prices(ranked[:count], bids)
        except Exception as exc:  # noqa: BLE001
            observed[str(count)] = _raised(exc)
    return observed


def feature_rows_are_smoothed_rates():
    observed = {}
    for stats in (AdStats("ad-a", 10_000, 300, 30), AdStats("ad-new", 0, 0, 0),
                  AdStats("ad-q", 5_000, 40, 2, quality=0.4, freshness=0.5)):
        try:
            observed[stats.ad_id] = build_features(stats)
        except Exception as exc:  # noqa: BLE001
            observed[stats.ad_id] = _raised(exc)
    return observed


def attribution_window_is_seven_days():
    clicks = [Click("k1", "ad-a", 1_000_000), Click("k2", "ad-b", 1_000_000)]
    conversions = [
        ConversionEvent("e1", "Purchase", 1_000_000 + 86_400, "k1", 0, "USD"),
        ConversionEvent("e2", "Purchase", 1_000_000 + 8 * 86_400, "k1", 0, "USD"),
        ConversionEvent("e3", "Lead", 1_000_000 + 60, "k2", 0, "USD"),
        ConversionEvent("e4", "Lead", 999_000, "k2", 0, "USD"),
    ]
    return dict(attribute_conversions(clicks, conversions))


# --- capi_pipeline --------------------------------------------------------------------------


def _ingest(batch):
    store = InMemoryEventStore()
    try:
        result = ConversionIngestor(store).ingest(batch)
    except Exception as exc:  # noqa: BLE001
        return _raised(exc)
    return {
        "accepted": result.accepted,
        "duplicates": result.duplicates,
        "rejected": [[reason.split(":")[0], "event_name" in reason, "currency" in reason]
                     for reason in result.rejected],
        "value_usd_micros": result.value_usd_micros,
        "events": [[e.event_id, e.event_time, e.click_id, e.value_micros, e.currency]
                   for e in store.all_events()],
    }


def _event(event_id, **fields):
    raw = {"event_id": event_id, "event_name": "Purchase", "event_time": 1_717_000_000}
    raw.update(fields)
    return raw


def ingest_events_with_null_fields():
    return _ingest([
        _event("n1", currency=None, value=12.5, click_id="clk-1"),
        _event("n2", click_id=None, value=3, currency="eur"),
        _event("n3", click_id=4471, currency="USD"),
        _event("n4", click_id="  clk-4 ", currency=" gbp "),
    ])


def ingest_reports_rejections_and_duplicates():
    first = _ingest([
        _event("d1", value=5, currency="usd"),
        _event("d1", value=5, currency="usd"),
        _event("d2", event_name="PageView"),
        _event("d3", currency="XYZ", value=1),
        _event("d4", event_name="Lead", click_id="clk-9"),
    ])
    return first


def ingest_values_in_dollars():
    batch = [_event(f"v-{code}", value=value, currency=code)
             for code, value in (("usd", 19.99), ("EUR", 19.99), ("gbp", 7), ("BRL", 250),
                                 ("inr", 1499))]
    return _ingest(batch)


def ingest_batch_limit():
    batch = [_event(f"e{i}", event_name="Lead") for i in range(1001)]
    try:
        ConversionIngestor(InMemoryEventStore()).ingest(batch)
    except InvalidEvent as exc:
        oversize = {"raised": type(exc).__name__, "names_the_size": "1001" in str(exc)}
    else:
        oversize = {"raised": None}
    ok = _ingest(batch[:1000])
    return {"oversize": oversize, "accepted_of_1000": ok.get("accepted")}


def normalize_event_fields():
    observed = []
    for raw in (_event("m1", event_time=1_717_000_000_500, value="4.20", currency="brl"),
                _event("m2", event_time="1717000123"),
                _event("m3", value=-1), _event("m4", event_time=None)):
        try:
            e = normalize_event(raw)
        except InvalidEvent as exc:
            observed.append({"raised": type(exc).__name__, "names_event": raw["event_id"] in str(exc)})
        except Exception as exc:  # noqa: BLE001
            observed.append(_raised(exc))
        else:
            observed.append([e.event_id, e.event_time, e.value_micros, e.currency, e.click_id])
    return observed


# --- whatsapp_sync --------------------------------------------------------------------------

USERS = {
    "u-1": {"user_id": "u-1", "display_name": "Loja", "phone": "+351 912 345 678",
            "email": "ana@loja.example", "locale": "pt_PT", "opted_in": False},
    "u-2": {"user_id": "u-2", "display_name": "Mail Only", "phone": None,
            "email": "zoe.k@mail.example", "locale": "en_GB", "opted_in": True},
    "u-3": {"user_id": "u-3", "display_name": "Phone Only", "phone": "+1 415 555 0199",
            "email": "", "locale": "en_US", "opted_in": True},
}


def _api():
    from whatsapp_sync import MessageRepository, SyncApi, repository

    messages = {}

    class Conn:
        async def fetch_one(self, query, *args):
            if query == repository.SELECT_USER:
                row = USERS.get(args[0])
                return dict(row) if row else None
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

    return SyncApi(MessageRepository(Pool())), Pool


async def _call(coro):
    try:
        return await coro
    except Exception as exc:  # noqa: BLE001
        return _raised(exc)


async def profiles_mask_pii():
    api, _ = _api()
    return {user_id: await _call(api.get_profile(user_id)) for user_id in ("u-1", "u-2", "u-3")}


async def profiles_with_scope_and_unknown_users():
    api, pool = _api()
    return {
        "support": await _call(api.get_profile("u-1", scopes=("support:read_pii",))),
        "unknown": await _call(api.get_profile("u-404")),
        "connections_out": pool.out,
    }


async def template_messages_render():
    api, _ = _api()
    requests = [
        {"to": "u-1", "template": "order_shipped", "params": ["Ana", "#A-1182", "Friday"]},
        {"to": "u-2", "template": "appointment_reminder", "params": ["Zoe", "12 May", "09:30"]},
        {"to": "u-3", "template": "otp", "params": [730114]},
        {"to": "u-1", "template": "order_shipped", "params": ["Ana", "#A-1182"]},
        {"to": "u-1", "template": "welcome", "params": []},
    ]
    return [await _call(api.send_template(r)) for r in requests]


async def webhooks_inbound_and_status():
    api, pool = _api()
    inbound = {"message_id": "m1", "from": "u-1", "timestamp": 5}
    status = {"message_id": "m1", "status": "read", "timestamp": 6}
    return {
        "inbound": await _call(api.inbound_webhook(inbound)),
        "again": await _call(api.inbound_webhook(inbound)),
        "status": await _call(api.status_webhook(status)),
        "unknown": (await _call(api.status_webhook({**status, "message_id": "nope"})))["status"],
        "connections_out": pool.out,
    }


# --- PASS_TO_PASS: every site this seed did not break ---------------------------------------

AD_RANKING = (rank_scores_feature_rows, rank_refuses_ads_it_cannot_score,
              rank_endpoint_prices_winners, rank_endpoint_reads_string_bids,
              rank_endpoint_new_and_unknown_ads, rank_endpoint_answers_400_to_bad_requests,
              clearing_prices_cover_every_position, feature_rows_are_smoothed_rates,
              attribution_window_is_seven_days)
CAPI = (ingest_events_with_null_fields, ingest_reports_rejections_and_duplicates,
        ingest_values_in_dollars, ingest_batch_limit, normalize_event_fields)
WHATSAPP = (profiles_mask_pii, profiles_with_scope_and_unknown_users, template_messages_render,
            webhooks_inbound_and_status)


def _unbroken(probes):
    # every site: the grader leaves out the entries of this seed's FAIL_TO_PASS probes on its
    # own side (metasre.simulator.hidden), so this module names none of them
    return list(probes)


def ad_ranking_unchanged():
    return {p.__name__: p() for p in _unbroken(AD_RANKING)}


def capi_pipeline_unchanged():
    return {p.__name__: p() for p in _unbroken(CAPI)}


async def whatsapp_sync_unchanged():
    observed = {}
    for probe in _unbroken(WHATSAPP):
        result = probe()
        observed[probe.__name__] = await result if inspect.isawaitable(result) else result
    return observed
