"""Writes ad-ranking-crash's main axis (`[[variants.fault]]`) from the sites below.

Each site is a line of healthy code (the topology's, or this family's history commits 06-08)
and the broken form the seed's bad commit (09, a patch) gives it. The rest of the table is
derived by running the code, so it cannot drift from it: the request that reaches the site is
run on the healthy and on the broken tree, and its traceback becomes the logged stack trace
(and the difficulty: "medium" when the innermost frame is not the broken line); every hidden
probe runs on both trees, and the probes whose observations differ become the seed's
FAIL_TO_PASS checks (the `*_unchanged` probes run the others as PASS_TO_PASS); the reference
fix is the edit that restores the line, proven to restore the file exactly. Run it after
changing a site, the healthy code or the probes, then `metasre validate ad-ranking-crash`:

    python -m tools.families regenerate ad_ranking_crash
"""

# ruff: noqa: E501  # the sites quote their code lines whole

from __future__ import annotations

from typing import Any

from ..authoring import SCENARIOS, CodeSites

# --- the requests that reach each site -------------------------------------------------------

RANK_SETUP = """
from ad_ranking import AdStats, InMemoryFeatureStore, handle_rank_request
store = InMemoryFeatureStore([
    AdStats("ad-a", impressions=10_000, clicks=300, attributed_conversions=30),
    AdStats("ad-b", impressions=20_000, clicks=150, attributed_conversions=12, quality=0.9),
    AdStats("ad-c", impressions=10_000, clicks=300, attributed_conversions=30, quality=0.0),
    AdStats("ad-new", impressions=0, clicks=0, attributed_conversions=0),
])
def cand(a, c, b):
    return {"ad_id": a, "campaign_id": c, "bid_micros": b}
def rank(*cands):
    r = handle_rank_request({"candidates": list(cands)}, store)
    assert r["status"] in (200, 400), r
"""
CAPI_SETUP = """
from capi_pipeline import ConversionIngestor, InMemoryEventStore
def ev(i, **kw):
    raw = {"event_id": i, "event_name": "Purchase", "event_time": 1_772_000_000, "value": 12, "currency": "USD", "click_id": "clk-1"}
    raw.update(kw)
    return raw
def ingest(*batch):
    ConversionIngestor(InMemoryEventStore()).ingest(list(batch))
"""
WA_SETUP = """
import asyncio
from whatsapp_sync import MessageRepository, SyncApi, repository
USERS = {
    "u-1": {"user_id": "u-1", "display_name": "Loja", "phone": "+351 912 345 678", "email": "ana@loja.example", "locale": "pt_PT", "opted_in": False},
    "u-2": {"user_id": "u-2", "display_name": "Mail", "phone": None, "email": "zoe@mail.example", "locale": "en_GB", "opted_in": True},
    "u-3": {"user_id": "u-3", "display_name": "Tel", "phone": "+1 415 555 0199", "email": "", "locale": "en_US", "opted_in": True},
}
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
def call(coro):
    r = asyncio.run(coro)
    assert r["status"] in (200, 400, 404), r
"""
TRIGGERS = {
    "rank": RANK_SETUP + 'rank(cand("ad-a", "c-1", 1_000_000), cand("ad-b", "c-2", 1_500_000))',
    "rank_unknown": RANK_SETUP
    + 'rank(cand("ad-a", "c-1", 1_000_000), cand("ad-7731", "c-3", 900_000))',
    "rank_new": RANK_SETUP + 'rank(cand("ad-new", "c-1", 800_000), cand("ad-a", "c-1", 1_000_000))',
    "rank_str": RANK_SETUP + 'rank(cand("ad-a", "c-1", "1200000"), cand("ad-b", "c-2", "3000000"))',
    "rank_zero": RANK_SETUP
    + 'rank(cand("ad-a", "c-1", 1_000_000), cand("ad-c", "c-2", 2_000_000))',
    "ingest": CAPI_SETUP + 'ingest(ev("e1"), ev("e2", event_name="Lead", value=0))',
    "ingest_null_currency": CAPI_SETUP + 'ingest(ev("e1"), ev("e2", currency=None))',
    "ingest_null_click": CAPI_SETUP + 'ingest(ev("e1"), ev("e2", click_id=None))',
    "ingest_rejected": CAPI_SETUP + 'ingest(ev("e1"), ev("e2", event_name="PageView"))',
    "ingest_eur": CAPI_SETUP + 'ingest(ev("e1", currency="eur", value=19.99))',
    "wa_profile": WA_SETUP + 'call(api.get_profile("u-1"))',
    "wa_mail_only": WA_SETUP + 'call(api.get_profile("u-2"))',
    "wa_phone_only": WA_SETUP + 'call(api.get_profile("u-3"))',
    "wa_unknown": WA_SETUP + 'call(api.get_profile("u-404"))',
    "wa_template": WA_SETUP
    + 'call(api.send_template({"to": "u-1", "template": "order_shipped", "params": ["Ana", "#A-1182", "Friday"]}))',
    "wa_template_int": WA_SETUP
    + 'call(api.send_template({"to": "u-3", "template": "otp", "params": [730114]}))',
}

# --- the sites, by service ------------------------------------------------------------------

RANKING = dict(
    service="ad_ranking",
    team="ranking-team",
    train="v3.9",
    deploy="ad-ranking",
    neighbour="whatsapp_sync",
    neighbour_version="v1.23.1",
    neighbour_change="whatsapp_sync: raise the webhook worker count from 8 to 12 (MSG-1202)",
    request="POST /v1/rank",
    impact="The ads frontend is falling back to unranked house ads for the failing requests.",
    caller="ads-frontend: POST ad-ranking/v1/rank -> 500; serving fallback house ads",
)
CAPI = dict(
    service="capi_pipeline",
    team="capi-team",
    train="v2.15",
    deploy="capi-pipeline",
    neighbour="ad_ranking",
    neighbour_version="v3.9.1",
    neighbour_change="ad_ranking: log the candidate count per request at DEBUG (ADS-2249)",
    request="POST /v1/events",
    impact="Advertisers' conversion batches are refused whole; partner SDKs are queueing retries.",
    caller="events-manager: POST capi-pipeline/v1/events -> 500 for advertiser batches; partner SDKs queueing retries",
)
WA = dict(
    service="whatsapp_sync",
    team="messaging-team",
    train="v1.23",
    deploy="whatsapp-sync",
    neighbour="capi_pipeline",
    neighbour_version="v2.15.1",
    neighbour_change="capi_pipeline: accept 'CompleteRegistration' from the iOS SDK 17.2 (ADS-2257)",
    request="GET /v1/users/{user_id}",
    impact="The business inbox shows 'profile unavailable' for the failing customers.",
    caller="inbox-web: GET whatsapp-sync/v1/users/{id} -> 500; business inbox shows 'profile unavailable'",
)
WA_T = dict(
    WA,
    request="POST /v1/messages/template",
    impact="Campaign template messages are not being sent.",
    caller="campaigns-worker: POST whatsapp-sync/v1/messages/template -> 500; template sends failing, retrying",
)

FAULTS = [
    dict(
        RANKING,
        key="ranker-quality-attr",
        file="ad_ranking/ranker.py",
        mechanism="dict read as an object",
        find='    quality = features["quality"]',
        bug="    quality = features.quality",
        trigger="rank",
        error_rate=0.93,
        message="ad_ranking: read quality the way the feature-store client exposes it (ADS-2231)\n\nThe new feature-store client hands out FeatureRow objects with one attribute\nper signal; read quality through it like the ranking notebooks do.",
    ),
    dict(
        RANKING,
        key="ranker-sort-subscript",
        file="ad_ranking/ranker.py",
        mechanism="an object read as a dict",
        find="    ranked.sort(key=lambda ad: (-ad.score, ad.ad_id))",
        bug='    ranked.sort(key=lambda ad: (-ad["score"], ad["ad_id"]))',
        trigger="rank",
        error_rate=0.91,
        message="ad_ranking: sort ranked ads with the offline replay's key (ADS-2236)\n\nSame key as the replay job, so offline and online orders compare line by line.",
    ),
    dict(
        RANKING,
        key="ranker-missing-row",
        file="ad_ranking/ranker.py",
        mechanism="a missing feature row not handled",
        find="        features = features_by_ad.get(candidate.ad_id)",
        bug="        features = features_by_ad[candidate.ad_id]",
        trigger="rank_unknown",
        error_rate=0.34,
        message="ad_ranking: index feature rows directly (ADS-2240)\n\n.get() hid a backfill bug for a week; every candidate has a row since the\nstore backfill, so index the mapping and let a gap show.",
    ),
    dict(
        RANKING,
        key="ranker-campaign-rename",
        file="ad_ranking/ranker.py",
        mechanism="a renamed field",
        find="        ranked.append(RankedAd(candidate.ad_id, candidate.campaign_id, round(score, 6)))",
        bug="        ranked.append(RankedAd(candidate.ad_id, candidate.campaign, round(score, 6)))",
        trigger="rank",
        error_rate=0.95,
        message="ad_ranking: follow the ads API v19 field names (ADS-2229)\n\nv19 renames campaign_id to campaign in ad objects; start reading the new name.",
    ),
    dict(
        RANKING,
        key="service-payload-rename",
        file="ad_ranking/service.py",
        mechanism="a renamed field",
        find='        "campaign_id": ad.campaign_id,',
        bug='        "campaign_id": ad.campaign,',
        trigger="rank",
        error_rate=0.95,
        message="ad_ranking: response fields follow the ads API v19 names (ADS-2229)\n\nv19 calls the campaign reference `campaign`; the response keeps its key.",
    ),
    dict(
        RANKING,
        key="service-bid-type",
        file="ad_ranking/service.py",
        mechanism="a wrong type (bids left as strings)",
        find='        AdCandidate(str(c["ad_id"]), str(c["campaign_id"]), int(c["bid_micros"])) for c in raw',
        bug='        AdCandidate(str(c["ad_id"]), str(c["campaign_id"]), c["bid_micros"]) for c in raw',
        trigger="rank_str",
        error_rate=0.41,
        message="ad_ranking: drop the redundant int() on bids (ADS-2244)\n\nbid_micros is already a JSON number; the cast showed up in the request\nparsing profile.",
    ),
    dict(
        RANKING,
        key="service-prices-key",
        file="ad_ranking/service.py",
        mechanism="the wrong key",
        find='    return {"status": 200, "ads": [_ad_payload(ad, prices[ad.ad_id]) for ad in ranked]}',
        bug='    return {"status": 200, "ads": [_ad_payload(ad, prices[ad.campaign_id]) for ad in ranked]}',
        trigger="rank",
        error_rate=0.96,
        message="ad_ranking: look prices up per campaign (ADS-2247)\n\nBilling reconciles per campaign, so the response should carry the campaign's\nclearing price.",
    ),
    dict(
        RANKING,
        key="auction-off-by-one",
        file="ad_ranking/auction.py",
        mechanism="an off-by-one index",
        find="        runner_up = ranked[position + 1].score if position + 1 < len(ranked) else 0.0",
        bug="        runner_up = ranked[position + 1].score if position < len(ranked) else 0.0",
        trigger="rank",
        error_rate=0.97,
        message="ad_ranking: simplify the runner-up lookup in clearing_prices (ADS-2238)",
    ),
    dict(
        RANKING,
        key="auction-zero-score",
        file="ad_ranking/auction.py",
        mechanism="a zero score not handled",
        find="        if ad.score <= 0:\n            prices[ad.ad_id] = min(bid, RESERVE_PRICE_MICROS)\n            continue\n",
        bug="",
        trigger="rank_zero",
        error_rate=0.24,
        message="ad_ranking: drop a dead branch from clearing_prices (ADS-2242)\n\nAds with a zero score never reach the auction (quality-0 creatives are\nfiltered upstream), so the guard is dead code.",
    ),
    dict(
        RANKING,
        key="features-unknown-ad",
        file="ad_ranking/features.py",
        mechanism="an unknown ad not handled",
        find="            if ad_id not in self._stats:\n                continue\n",
        bug="",
        trigger="rank_unknown",
        error_rate=0.33,
        message="ad_ranking: skip a membership test on the hot path (ADS-2243)\n\nThe candidate generator only emits ads the feature store knows since\nADS-2190, so the check costs a lookup per candidate for nothing.",
    ),
    dict(
        RANKING,
        key="features-renamed-counter",
        file="ad_ranking/features.py",
        mechanism="a renamed field",
        find="    pcvr = (stats.attributed_conversions + config.PRIOR_CONVERSIONS) / (",
        bug="    pcvr = (stats.conversions + config.PRIOR_CONVERSIONS) / (",
        trigger="rank",
        error_rate=0.94,
        message="ad_ranking: pCVR from the conversions counter (ADS-2235)\n\nThe stats job now exports the counter as `conversions`; read that.",
    ),
    dict(
        RANKING,
        key="features-zero-impressions",
        file="ad_ranking/features.py",
        mechanism="zero impressions not handled",
        find="    pctr = (stats.clicks + config.PRIOR_CLICKS) / (stats.impressions + config.PRIOR_IMPRESSIONS)",
        bug="    pctr = (stats.clicks + config.PRIOR_CLICKS) / stats.impressions",
        trigger="rank_new",
        error_rate=0.29,
        message="ad_ranking: smooth pCTR with the click prior only (ADS-2239)\n\nThe impression prior pulled every established ad's pCTR toward 1%;\nthe click prior alone is enough to keep new ads above zero.",
    ),
    dict(
        CAPI,
        key="normalize-currency-none",
        file="capi_pipeline/normalize.py",
        mechanism="None not handled",
        find='    currency = str(raw.get("currency") or config.DEFAULT_CURRENCY).strip().upper()',
        bug='    currency = raw.get("currency", config.DEFAULT_CURRENCY).strip().upper()',
        trigger="ingest_null_currency",
        error_rate=0.31,
        message="capi_pipeline: default the currency with dict.get (ADS-2250)\n\nReads better than the str(... or ...) chain; same result.",
    ),
    dict(
        CAPI,
        key="normalize-click-none",
        file="capi_pipeline/normalize.py",
        mechanism="None not handled",
        find='    click_id = str(raw.get("click_id") or "").strip() or None',
        bug='    click_id = raw.get("click_id", "").strip() or None',
        trigger="ingest_null_click",
        error_rate=0.44,
        message="capi_pipeline: simpler click_id normalisation (ADS-2251)",
    ),
    dict(
        CAPI,
        key="ingest-result-rename",
        file="capi_pipeline/ingest.py",
        mechanism="a renamed field",
        find="            duplicates=len(events) - inserted,",
        bug="            duplicate_count=len(events) - inserted,",
        trigger="ingest",
        error_rate=0.97,
        message="capi_pipeline: call duplicates duplicate_count, like Events Manager (ADS-2252)",
    ),
    dict(
        CAPI,
        key="ingest-reject-reason",
        file="capi_pipeline/ingest.py",
        mechanism="an attribute that does not exist",
        find="                rejected.append(str(exc))",
        bug="                rejected.append(exc.reason)",
        trigger="ingest_rejected",
        error_rate=0.43,
        message="capi_pipeline: keep the structured rejection reason (ADS-2254)\n\nEvents Manager wants the reason without the event prefix.",
    ),
    dict(
        CAPI,
        key="ingest-value-field",
        file="capi_pipeline/ingest.py",
        mechanism="a renamed field",
        find="        value = sum(to_usd_micros(e.value_micros, e.currency) for e in events)",
        bug="        value = sum(to_usd_micros(e.value, e.currency) for e in events)",
        trigger="ingest",
        error_rate=0.96,
        message="capi_pipeline: sum the batch value from the event's value (ADS-2255)",
    ),
    dict(
        CAPI,
        key="currency-float-rate",
        file="capi_pipeline/currency.py",
        mechanism="a wrong type (a float among Decimals)",
        find='    "EUR": Decimal("1.08"),',
        bug='    "EUR": 1.08,',
        trigger="ingest_eur",
        error_rate=0.27,
        message="capi_pipeline: weekly FX refresh (ADS-2256)\n\nEUR 1.08 from the finance job's Monday run.",
    ),
    dict(
        CAPI,
        key="currency-key-case",
        file="capi_pipeline/currency.py",
        mechanism="the wrong key",
        find="    rate = USD_PER_UNIT[currency]",
        bug="    rate = USD_PER_UNIT[currency.lower()]",
        trigger="ingest",
        error_rate=0.97,
        message="capi_pipeline: case-insensitive currency lookup (ADS-2258)\n\nPartners send 'usd' and 'Usd'; normalise before the rate lookup.",
    ),
    dict(
        WA,
        key="api-user-subscript",
        file="whatsapp_sync/api.py",
        mechanism="an object read as a dict",
        find='        "phone": user.phone if reveal_pii else mask_phone(user.phone),',
        bug='        "phone": user["phone"] if reveal_pii else mask_phone(user["phone"]),',
        trigger="wa_profile",
        error_rate=0.92,
        message="whatsapp_sync: read profile rows as mappings (MSG-1191)\n\nPreparing for the asyncpg Record rows, which are mappings.",
    ),
    dict(
        WA,
        key="api-unknown-user",
        file="whatsapp_sync/api.py",
        mechanism="None not handled",
        find='        if user is None:\n            return {"status": 404, "error": f"user {user_id} not found"}\n        body = user_payload(user, reveal_pii=config.PII_SCOPE in scopes)',
        bug="        body = user_payload(user, reveal_pii=config.PII_SCOPE in scopes)",
        trigger="wa_unknown",
        error_rate=0.19,
        message="whatsapp_sync: profiles are only requested for known users (MSG-1193)\n\nThe inbox resolves users before it asks for a profile, so the 404 branch is\nunreachable.",
    ),
    dict(
        WA,
        key="api-phone-none",
        file="whatsapp_sync/api.py",
        mechanism="None not handled",
        find='    if not phone:\n        return ""\n',
        bug="",
        trigger="wa_mail_only",
        error_rate=0.26,
        message="whatsapp_sync: every user has a phone again (MSG-1195)\n\nE-mail-only sign-up was switched off last week; remove its special case.",
    ),
    dict(
        WA,
        key="api-email-split",
        file="whatsapp_sync/api.py",
        mechanism="an unpacking that assumes a shape",
        find='    local, _, domain = email.partition("@")',
        bug='    local, domain = email.split("@")',
        trigger="wa_phone_only",
        error_rate=0.22,
        message="whatsapp_sync: split e-mail addresses once (MSG-1196)",
    ),
    dict(
        WA_T,
        key="template-off-by-one",
        file="whatsapp_sync/templates.py",
        mechanism="an off-by-one index",
        find="        return params[index - 1]",
        bug="        return params[index]",
        trigger="wa_template",
        error_rate=0.88,
        message="whatsapp_sync: placeholders index params directly (MSG-1198)",
    ),
    dict(
        WA_T,
        key="template-index-type",
        file="whatsapp_sync/templates.py",
        mechanism="a wrong type (the placeholder number left a string)",
        find="        index = int(match.group(1))",
        bug="        index = match.group(1)",
        trigger="wa_template",
        error_rate=0.9,
        message="whatsapp_sync: placeholder numbers need no parsing (MSG-1199)",
    ),
    dict(
        WA_T,
        key="api-template-params",
        file="whatsapp_sync/api.py",
        mechanism="a wrong type (parameters left unconverted)",
        find='            params = [str(p) for p in payload.get("params", [])]',
        bug='            params = list(payload.get("params", []))',
        trigger="wa_template_int",
        error_rate=0.37,
        message="whatsapp_sync: pass template params through untouched (MSG-1200)\n\nstr() turned the campaign tool's None placeholders into 'None'.",
    ),
]


PROBE_VALUES: dict[str, str] = {}
"""Templates of hidden/probes.py other than `{{fault.fail_to_pass}}`, and their values here."""


def derived(table: dict[str, Any]) -> dict[str, Any]:
    """What the site's crash does to its service at full strength."""
    effects = {"error_rate": table["error_rate"], "p99_ms": 520, "cpu": 0.12, "queue_depth": 16}
    return {"effects": {table["service"]: effects}, "subject": table["message"].split("\n")[0]}


# --- the harness: every table is checked against real runs of the code ----------------------

HERE = SCENARIOS / "ad_ranking_crash"
SITES = CodeSites(
    here=HERE,
    topology=HERE.parent / "_topologies" / "ads_platform" / "history",
    derived=derived,
    triggers=TRIGGERS,
    probe_values=PROBE_VALUES,
)


def axes() -> str:
    """Every site's table, completed from runs of the code."""
    return SITES.axis(FAULTS)
