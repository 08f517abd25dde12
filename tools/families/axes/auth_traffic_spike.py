"""Writes auth-traffic-spike's main axis (`[[variants.fault]]`): 21 services x 3 load sources.

Each table follows from one (saturated service, source, factor): the replicas the remedy needs
(ceil(replicas x factor / 1.3): one replica saturates at 1.3x its usual load, load test LT-42),
which of the other teams' services the seed deploys, the callers that time out along the
dependency chain with their logs and effects, the alerts, the health checks and the report. Run
it after changing a service, a source or the chain, then `metasre validate auth-traffic-spike`:

    python -m tools.families regenerate auth_traffic_spike
"""

# ruff: noqa: E501  # one source a line: its log line, terminal line and summary stay whole

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from ..authoring import SCENARIOS, fault_axis, log

HERE = SCENARIOS / "auth_traffic_spike"
SATURATION = 1.3
"""A replica saturates at this multiple of its usual load (load test LT-42)."""


@dataclass(frozen=True, slots=True)
class Service:
    """A service of the shop as this family sees it."""

    replicas: int
    depends_on: tuple[str, ...]
    base_cpu: float
    call: str
    """What its callers ask of it, as their error lines say."""
    elsewhere: bool = False
    """Owned by another team (code in its own repository); a seed may or may not deploy it."""


SERVICES = {
    "api-gateway": Service(
        4,
        (
            "auth-service",
            "user-service",
            "checkout-service",
            "payment-service",
            "search-service",
            "catalog-service",
            "cart-service",
            "recommendation-service",
            "review-service",
            "media-service",
        ),
        0.38,
        "GET /v1/products",
    ),
    "auth-service": Service(3, ("redis-cache",), 0.44, "POST /v1/auth/verify"),
    "user-service": Service(3, ("postgres-db", "auth-service"), 0.33, "GET /v1/users/u-3381"),
    "notification-service": Service(2, ("redis-cache",), 0.18, "POST /v1/notifications"),
    "checkout-service": Service(
        3,
        (
            "order-service",
            "notification-service",
            "cart-service",
            "pricing-service",
            "promotion-service",
        ),
        0.29,
        "POST /v1/checkout",
    ),
    "order-service": Service(
        3, ("inventory-service", "mongo-db", "shipping-service"), 0.27, "POST /v1/orders"
    ),
    "inventory-service": Service(3, ("mongo-db",), 0.24, "POST /v1/reservations"),
    "payment-service": Service(
        3, ("postgres-db", "fraud-service"), 0.31, "POST /v1/payments/charge"
    ),
    "postgres-db": Service(2, (), 0.35, "query"),
    "mongo-db": Service(3, (), 0.30, "query"),
    "redis-cache": Service(2, (), 0.15, "command"),
    "search-service": Service(3, ("redis-cache", "catalog-service"), 0.36, "GET /v1/search", True),
    "catalog-service": Service(3, ("mongo-db",), 0.31, "GET /v1/products/p-20931", True),
    "cart-service": Service(
        3, ("redis-cache", "pricing-service"), 0.27, "POST /v1/cart/items", True
    ),
    "recommendation-service": Service(
        2, ("redis-cache", "catalog-service"), 0.42, "GET /v1/recommendations", True
    ),
    "pricing-service": Service(2, ("postgres-db",), 0.29, "POST /v1/prices/quote", True),
    "promotion-service": Service(2, ("redis-cache",), 0.22, "POST /v1/promotions/apply", True),
    "fraud-service": Service(2, ("postgres-db",), 0.34, "POST /v1/fraud/score", True),
    "shipping-service": Service(2, (), 0.21, "POST /v1/shipments/rates", True),
    "review-service": Service(2, ("postgres-db",), 0.26, "GET /v1/reviews", True),
    "media-service": Service(3, (), 0.39, "GET /v1/images/resize", True),
}
"""The shop topology's services (replicas and edges as this family's scenario.toml declares
them), and the ten of other teams that it may add."""
DATABASES = frozenset({"postgres-db", "mongo-db", "redis-cache"})
ELSEWHERE = [name for name, s in SERVICES.items() if s.elsewhere]
FLAG = {name: name.split("-")[0] for name in ELSEWHERE}
"""The `fault.has.<flag>` that deploys each of the other teams' services."""
PAGING = frozenset({"api-gateway", "checkout-service", "payment-service", "user-service"})
"""Callers whose errors page as P1."""


@dataclass(frozen=True, slots=True)
class Source:
    """Where a saturated service's extra load comes from."""

    service: str
    kind: str
    """campaign, retry (one outside client re-sending calls), bot or batch."""
    factor: float
    line: str
    """The cause, as the saturated service's log names it ({pct}: the source's share)."""
    terminal: str
    summary: str
    queue: str = ""
    """The queue the service's workers consume, when the load arrives as messages: the
    workers lag behind it (consumer_lag) and the callers, who only enqueue, do not wait."""


SourceRow = tuple[str, str, float, str, str, str] | tuple[str, str, float, str, str, str, str]
"""A Source's fields in order, with or without its queue."""

SOURCE_ROWS: list[SourceRow] = [
    (
        "api-gateway",
        "bot",
        2.9,
        "{pct}% of it from the price-comparison crawler PriceHawkBot/2.1 on 1,900 IPs (allowed by the partner agreement, not blockable today)",
        "waf: top user agent PriceHawkBot/2.1 (partner crawler, allow-listed under PARTNER-77)",
        "a partner's allow-listed crawler",
    ),
    (
        "api-gateway",
        "campaign",
        1.9,
        "visits from the half-time TV ad that showed the shop's URL",
        "marketing: half-time TV ad aired 3 min before the page (shop URL on screen)",
        "a TV ad showing the shop's URL",
    ),
    (
        "api-gateway",
        "retry",
        3.6,
        "{pct}% of it from shop-android 9.1.0, which sends every failed call again three times at once",
        "app-store: shop-android 9.1.0 rollout at 50% (new network layer)",
        "a mobile release that re-sends every failed call three times at once",
    ),
    (
        "auth-service",
        "campaign",
        2.4,
        "logins from the 'Winter sale starts now' push sent to 4.1M app users at the top of the hour (pbkdf2 logins ~80 ms CPU each)",
        "marketing: 'Winter sale starts now' push delivered to 4.1M app users",
        "a marketing push that sent millions of users to log in at once",
    ),
    (
        "auth-service",
        "bot",
        3.9,
        "{pct}% of it from a credential-stuffing run of the 'leaked-combo' list (each attempt costs a full pbkdf2 hash; the WAF rule is still in review)",
        "waf: login attempts from 11k IPs matching the leaked-combo list, rule WAF-311 pending review",
        "a credential-stuffing run hashing every attempt",
    ),
    (
        "auth-service",
        "batch",
        1.7,
        "the session-reissue job re-issuing 6M tokens through POST /v1/auth/token after the signing-key rotation",
        "cron: session-reissue started 10 min ago (6M tokens, key rotation SEC-88)",
        "the token re-issue job after a key rotation",
    ),
    (
        "user-service",
        "retry",
        3.1,
        "{pct}% of it from shop-ios 7.3.0, which re-sends a profile refresh every 2 s while the screen is open",
        "app-store: shop-ios 7.3.0 rollout at 60% (profile screen rewrite)",
        "a mobile release that refreshes the profile every 2 s",
    ),
    (
        "user-service",
        "campaign",
        2.0,
        "profile visits from the account-anniversary e-mail (1.8M recipients, 'see your year with us')",
        "crm: account-anniversary e-mail sent to 1.8M customers",
        "an e-mail campaign linking to the profile page",
    ),
    (
        "user-service",
        "batch",
        4.0,
        "the gdpr-export job reading 2M profiles through GET /v1/users for the annual data audit",
        "cron: gdpr-export started 12 min ago (2M profiles)",
        "the data-audit export job reading every profile",
    ),
    (
        "notification-service",
        "batch",
        3.4,
        "2.2M 'order_confirmation' re-sends enqueued at once by the crm-newsletter-enqueue job",
        "cron: crm-newsletter-enqueue started 14 min ago (2.2M recipients)",
        "a CRM batch job enqueueing millions of e-mails",
        "notifications.outbox",
    ),
    (
        "notification-service",
        "campaign",
        1.8,
        "order confirmations from the FLASH-20 flash sale",
        "marketing: FLASH-20 flash sale live, TV spot aired at 19:59",
        "a flash sale's order confirmations",
    ),
    (
        "notification-service",
        "retry",
        2.6,
        "{pct}% of it from the fulfilment client re-posting shipping e-mails whenever an answer takes over 500 ms",
        "deploy-bot: fulfilment-worker 2.4.0 (warehouse team) live since 20 min, notify timeout 500 ms",
        "the warehouse's fulfilment client re-posting e-mails after a 500 ms timeout",
    ),
    (
        "checkout-service",
        "campaign",
        2.2,
        "the 20:00 flash sale (FLASH-20, 70% off headphones) announced on TV a minute before",
        "marketing: FLASH-20 flash sale live, TV spot aired at 19:59",
        "a televised flash sale",
    ),
    (
        "checkout-service",
        "bot",
        3.1,
        "{pct}% of it from scalper bots checking out the limited sneaker drop from 3,400 IPs (allowed until the drop's queue ships)",
        "waf: checkout attempts from 3.4k IPs on the limited drop SKU-77120",
        "scalper bots on a limited drop",
    ),
    (
        "checkout-service",
        "retry",
        3.8,
        "{pct}% of it from shop-ios 7.4.0, whose pay button submits the checkout again on every spinner tick",
        "app-store: shop-ios 7.4.0 rollout at 35% (one-tap checkout)",
        "a mobile release that re-submits the checkout while it waits",
    ),
    (
        "order-service",
        "batch",
        2.7,
        "the finance-order-export job paging through POST /v1/orders/search 500 orders at a time for the quarter close",
        "cron: finance-order-export started 11 min ago (quarter close)",
        "the quarter-close order export job",
    ),
    (
        "order-service",
        "campaign",
        1.9,
        "orders from the FLASH-20 flash sale",
        "marketing: FLASH-20 flash sale live, TV spot aired at 19:59",
        "a flash sale's orders",
    ),
    (
        "order-service",
        "retry",
        3.4,
        "{pct}% of it from the marketplace partner MarketHub re-posting orders after its new 1 s client timeout",
        "partner-status: MarketHub connector v5 live since 30 min (1 s timeout)",
        "a marketplace partner re-posting orders after a short timeout",
    ),
    (
        "inventory-service",
        "batch",
        3.6,
        "the marketplace-stock-sync job re-reserving 180k SKUs for the new marketplace listing",
        "cron: marketplace-stock-sync started 13 min ago (180k SKUs)",
        "a marketplace stock sync job",
    ),
    (
        "inventory-service",
        "campaign",
        2.1,
        "stock checks for the limited drop SKU-77120 announced on the app's home screen",
        "marketing: limited drop SKU-77120 on the app home screen since 19:55",
        "a limited drop's stock checks",
    ),
    (
        "inventory-service",
        "bot",
        2.9,
        "{pct}% of it from restock-alert bots polling availability of SKU-77120 from 2,100 IPs",
        "waf: availability polling from 2.1k IPs on SKU-77120",
        "restock bots polling availability",
    ),
    (
        "payment-service",
        "retry",
        1.9,
        "{pct}% of it from checkout-web 5.12.0 re-sending charges (same idempotency key) after its new 800 ms client timeout",
        "deploy-bot: checkout-web 5.12.0 (storefront) live since 25 min, client timeout 800 ms",
        "a storefront release re-sending charges after a too-short client timeout",
    ),
    (
        "payment-service",
        "campaign",
        2.6,
        "charges from the FLASH-20 flash sale",
        "marketing: FLASH-20 flash sale live, TV spot aired at 19:59",
        "a flash sale's charges",
    ),
    (
        "payment-service",
        "batch",
        3.3,
        "the subscription-renewals job charging 700k cards on the first of the month",
        "cron: subscription-renewals started 12 min ago (700k cards)",
        "the monthly subscription renewal run",
    ),
    (
        "postgres-db",
        "batch",
        2.3,
        "analytics-weekly-cohorts running 40 parallel cohort queries over two years of payments on the read replicas",
        "cron: analytics-weekly-cohorts started 15 min ago (40 workers)",
        "the weekly analytics cohort job on the read replicas",
    ),
    (
        "postgres-db",
        "campaign",
        1.8,
        "profile and payment reads from the 'Winter sale starts now' push (4.1M app users)",
        "marketing: 'Winter sale starts now' push delivered to 4.1M app users",
        "a push that opened millions of sessions at once",
    ),
    (
        "postgres-db",
        "retry",
        3.1,
        "{pct}% of it from the partner-reporting client re-running its revenue report every 5 s while it waits",
        "partner-status: ReportLink dashboard v3 live since 40 min (5 s refresh)",
        "a partner dashboard re-running its report every 5 s",
    ),
    (
        "mongo-db",
        "bot",
        2.6,
        "{pct}% of it product-page reads from the ShopSpy crawler, allow-listed for the affiliate programme",
        "waf: top user agent ShopSpy/4.0 (affiliate crawler, allow-listed)",
        "an affiliate crawler reading every product page",
    ),
    (
        "mongo-db",
        "batch",
        3.5,
        "the catalog-reindex job reading every product and order document for the new search index",
        "cron: catalog-reindex started 16 min ago (9M documents)",
        "a reindex job reading every document",
    ),
    (
        "mongo-db",
        "campaign",
        1.9,
        "product and order reads from the FLASH-20 flash sale",
        "marketing: FLASH-20 flash sale live, TV spot aired at 19:59",
        "a flash sale's product and order reads",
    ),
    (
        "redis-cache",
        "campaign",
        3.2,
        "session reads from the 'Winter sale starts now' push: 4.1M app users opening the app at once",
        "marketing: 'Winter sale starts now' push delivered to 4.1M app users",
        "a push notification that opened millions of sessions at once",
    ),
    (
        "redis-cache",
        "bot",
        2.4,
        "{pct}% of it session and revocation lookups from a credential-stuffing run of the 'leaked-combo' list",
        "waf: login attempts from 11k IPs matching the leaked-combo list, rule WAF-311 pending review",
        "a credential-stuffing run's session lookups",
    ),
    (
        "redis-cache",
        "batch",
        4.0,
        "the cache-priming job writing 20M product keys ahead of tomorrow's sale",
        "cron: cache-priming started 8 min ago (20M keys)",
        "a cache-priming job writing millions of keys",
    ),
    (
        "search-service",
        "bot",
        3.8,
        "{pct}% of it from SearchIndexerBot/3 re-crawling every search facet for the partner index",
        "waf: top user agent SearchIndexerBot/3 (partner index, allow-listed)",
        "a partner indexer crawling every search facet",
    ),
    (
        "search-service",
        "campaign",
        2.3,
        "searches for 'aurora' after the TV spot told viewers to search for it",
        "marketing: TV spot 'search Aurora in the app' aired at 20:14",
        "a TV spot telling viewers to search",
    ),
    (
        "search-service",
        "retry",
        2.9,
        "{pct}% of it from shop-android 9.2.0, whose search box sends a query on every keystroke and again when it is slow",
        "app-store: shop-android 9.2.0 rollout at 45% (instant search)",
        "a mobile release querying on every keystroke",
    ),
    (
        "catalog-service",
        "campaign",
        2.8,
        "product-page views from the TV spot for p-20931 that aired at 20:14",
        "marketing: TV spot for the Aurora headphones (p-20931) aired at 20:14",
        "a TV spot driving viewers to one product page",
    ),
    (
        "catalog-service",
        "batch",
        3.9,
        "the shopping-feed-export job reading every product through GET /v1/products for the ads feed",
        "cron: shopping-feed-export started 11 min ago (1.2M products)",
        "the shopping feed export reading every product",
    ),
    (
        "catalog-service",
        "bot",
        1.9,
        "{pct}% of it from the ShopSpy crawler, allow-listed for the affiliate programme",
        "waf: top user agent ShopSpy/4.0 (affiliate crawler, allow-listed)",
        "an affiliate crawler",
    ),
    (
        "cart-service",
        "campaign",
        2.5,
        "add-to-cart calls from the FLASH-20 flash sale",
        "marketing: FLASH-20 flash sale live, TV spot aired at 19:59",
        "a flash sale's add-to-cart rush",
    ),
    (
        "cart-service",
        "bot",
        3.7,
        "{pct}% of it from scalper bots holding the limited drop SKU-77120 in carts from 3,400 IPs",
        "waf: add-to-cart from 3.4k IPs on the limited drop SKU-77120",
        "scalper bots filling carts",
    ),
    (
        "cart-service",
        "retry",
        1.8,
        "{pct}% of it from checkout-web 5.13.0, which re-syncs the cart every second while the tab is open",
        "deploy-bot: checkout-web 5.13.0 (storefront) live since 18 min (live cart)",
        "a storefront release re-syncing the cart every second",
    ),
    (
        "recommendation-service",
        "batch",
        4.1,
        "the homepage-precompute job calling GET /v1/recommendations for 3M users instead of reading the offline store",
        "cron: homepage-precompute started 9 min ago (3M users)",
        "a batch job calling the online recommendation API for every user",
    ),
    (
        "recommendation-service",
        "campaign",
        2.2,
        "homepage visits from the 'made for you' takeover pushed to 2.5M users",
        "marketing: 'made for you' homepage takeover pushed to 2.5M users",
        "a personalised homepage campaign",
    ),
    (
        "recommendation-service",
        "bot",
        3.0,
        "{pct}% of it from a crawler following every 'related items' link (allow-listed SEO partner)",
        "waf: top user agent SEOCrawl/2.2 (allow-listed SEO partner)",
        "a crawler following related-item links",
    ),
    (
        "pricing-service",
        "batch",
        3.0,
        "900k reprice events published at once by the nightly-repricing job",
        "cron: nightly-repricing started 12 min ago (900k SKUs)",
        "the repricing job publishing an event per SKU",
        "pricing.reprice",
    ),
    (
        "pricing-service",
        "campaign",
        2.0,
        "quotes from the price-drop alert e-mail (1.1M subscribers)",
        "crm: price-drop alert sent to 1.1M subscribers",
        "a price-drop e-mail campaign",
    ),
    (
        "pricing-service",
        "retry",
        3.9,
        "{pct}% of it from the marketplace partner MarketHub re-quoting prices whenever a quote takes over 300 ms",
        "partner-status: MarketHub connector v5 live since 30 min (300 ms quote timeout)",
        "a marketplace partner re-quoting after a short timeout",
    ),
    (
        "promotion-service",
        "campaign",
        3.3,
        "coupon applications of code LUNA30 from an influencer's live stream",
        "marketing: influencer live stream with coupon LUNA30 started 16 min ago",
        "an influencer's coupon code going viral",
    ),
    (
        "promotion-service",
        "bot",
        2.1,
        "{pct}% of it from a coupon-guessing bot trying codes from 900 IPs (rate limit PROMO-12 not deployed yet)",
        "waf: coupon attempts from 900 IPs, 96% invalid codes",
        "a coupon-guessing bot",
    ),
    (
        "promotion-service",
        "batch",
        4.0,
        "the loyalty-precompute job evaluating every member's coupons through POST /v1/promotions/apply",
        "cron: loyalty-precompute started 10 min ago (4M members)",
        "a loyalty job evaluating coupons through the online API",
    ),
    (
        "fraud-service",
        "batch",
        2.1,
        "400k past charges enqueued for re-scoring by the chargeback-rescoring back-test job",
        "cron: chargeback-rescoring started 13 min ago (400k charges)",
        "a back-test job enqueueing past charges for re-scoring",
        "fraud.rescore",
    ),
    (
        "fraud-service",
        "campaign",
        3.0,
        "charges to score from the FLASH-20 flash sale",
        "marketing: FLASH-20 flash sale live, TV spot aired at 19:59",
        "a flash sale's charges to score",
    ),
    (
        "fraud-service",
        "bot",
        3.6,
        "{pct}% of it from a card-testing bot sending $1 charges with stolen cards from 1,500 IPs",
        "waf: $1 charges from 1.5k IPs, 91% declined",
        "a card-testing bot",
    ),
    (
        "shipping-service",
        "batch",
        3.7,
        "60k label requests enqueued at once by the evening-pickup label job",
        "cron: evening-pickup-labels started 10 min ago (60k parcels)",
        "the evening label-printing batch",
        "shipping.labels",
    ),
    (
        "shipping-service",
        "campaign",
        2.2,
        "rate quotes from the free-shipping weekend banner",
        "marketing: free-shipping weekend banner live since 19:50",
        "a free-shipping campaign's rate quotes",
    ),
    (
        "shipping-service",
        "retry",
        2.8,
        "{pct}% of it from the marketplace partner MarketHub re-requesting rates after its new 1 s client timeout",
        "partner-status: MarketHub connector v5 live since 30 min (1 s timeout)",
        "a marketplace partner re-requesting rates after a short timeout",
    ),
    (
        "review-service",
        "bot",
        4.2,
        "{pct}% of it from ReviewScraper/1.4 walking every product's reviews (allow-listed by the SEO team)",
        "waf: top user agent ReviewScraper/1.4 (SEO partner, allow-listed)",
        "an allow-listed scraper walking every review",
    ),
    (
        "review-service",
        "campaign",
        2.0,
        "review pages opened from the 'how was your order?' e-mail (900k recipients)",
        "crm: 'how was your order?' e-mail sent to 900k customers",
        "a review-request e-mail",
    ),
    (
        "review-service",
        "batch",
        3.1,
        "the sentiment-backfill job reading every review through GET /v1/reviews",
        "cron: sentiment-backfill started 14 min ago (6M reviews)",
        "a sentiment job reading every review",
    ),
    (
        "media-service",
        "campaign",
        2.0,
        "image resizes for the newsletter opened by 1.3M subscribers within minutes",
        "crm: 'Spring lookbook' newsletter sent to 1.3M subscribers at 19:30",
        "a newsletter whose images are resized on the fly",
    ),
    (
        "media-service",
        "bot",
        3.4,
        "{pct}% of it from an image scraper requesting every size of every product photo (allow-listed marketplace partner)",
        "waf: top user agent ImgFetch/1.0 (marketplace partner, allow-listed)",
        "a partner's image scraper",
    ),
    (
        "media-service",
        "batch",
        2.9,
        "2.4M resize jobs enqueued by the cdn-rewarm job after last night's CDN purge",
        "cron: cdn-rewarm started 9 min ago (2.4M images)",
        "a CDN re-warm job after a purge",
        "media.resize",
    ),
]
SOURCES = [Source(*row) for row in SOURCE_ROWS]


def deployed(index: int, root: str) -> dict[str, bool]:
    """Which of the other teams' services the seed's shape deploys (always the root)."""
    rng = random.Random(f"shape:{index}")
    return {FLAG[n]: (n == root) or rng.random() < 0.6 for n in ELSEWHERE}


def fault_table(index: int, source: Source) -> dict[str, Any]:
    """The `[[variants.fault]]` table of one (service, source)."""
    root, factor = source.service, source.factor
    has = deployed(index, root)
    present = [n for n, s in SERVICES.items() if not s.elsewhere or has[FLAG[n]]]
    deps = {n: [d for d in SERVICES[n].depends_on if d in present] for n in present}
    replicas = SERVICES[root].replicas
    required = math.ceil(replicas * factor / SATURATION)
    # The scripted expert scales to ceil(replicas x max(2, factor)) + 1: enough, and within the
    # over-provisioning ceiling (2 x required + 1).
    expert = min(64, math.ceil(replicas * max(2.0, factor)) + 1)
    assert required <= expert <= 2 * required + 1, (root, required, expert)
    affected = {root}
    grew = True
    while grew:
        grew = False
        for n in present:
            if n not in affected and any(d in affected for d in deps[n]):
                affected.add(n)
                grew = True
    # Workers that lag behind a queue slow nobody down: the callers only enqueue.
    if source.queue:
        affected = {root}
    callers = [n for n in present if n in affected and n != root]
    direct = [n for n in callers if root in deps[n]]
    p99 = 260 if root in DATABASES else 1300
    effects: dict[str, dict[str, float]] = {
        root: {
            "cpu": round(0.96 - SERVICES[root].base_cpu, 2),
            "p99_ms": p99,
            "error_rate": 0.03,
            "queue_depth": 45,
        }
    }
    pct = 40 + (index * 7) % 35
    pod = "-".join(
        (
            root,
            random.Random(index).choice(["7f5c8b9d6", "6b9f8d7c4", "8c7d9f6b5", "5d8c7b9f6"]),
            random.Random(index + 99).choice(["h4kzp", "w2mqs", "t8rjq", "c9vnb", "m3pld"]),
        )
    )
    kind = "shards" if root == "redis-cache" else ("replicas" if root in DATABASES else "pods")
    if source.queue:
        depth = 150_000 + index * 9_000
        effects[root].update({"queue_depth": 900, "p99_ms": 40, "error_rate": 0.01})
        lines = [
            f"consumer lag on {source.queue}: {replicas}/{replicas} {root} worker {kind} lagging"
            f" behind, messages arriving at {factor}x the usual rate; {source.line}",
            f"{source.queue}: {depth} messages waiting, the oldest for 14 min ({pod})",
        ]
    else:
        lines = [
            f"cpu saturated on {replicas}/{replicas} {root} {kind}: request rate {factor}x the"
            f" same hour last week; {source.line.format(pct=pct)}",
            f"{root} p99 {p99 + 120} ms with every worker busy; requests queue for a worker"
            f" ({pod})",
        ]
    logs: list[dict[str, Any]] = [log(root, "WARN", *lines)]
    for n in callers:
        blamed = root if n in direct else next(d for d in deps[n] if d in affected)
        if n in direct:
            effects[n] = {"error_rate": 0.24, "p99_ms": 1500}
            lines = [
                f"{SERVICES[blamed].call} to upstream {blamed} timed out after 1.5 s; answering 503",
                f"upstream {blamed} slow: 40% of calls over 1 s in the last minute",
            ]
        else:
            effects[n] = {"error_rate": 0.12, "p99_ms": 900}
            lines = [f"upstream {blamed} answered 503 for {SERVICES[blamed].call}; answering 503"]
        logs.append(log(n, "ERROR", *lines))
    alerts: list[dict[str, Any]] = [
        {
            "service": root,
            "metric": "cpu",
            "above": 0.85,
            "severity": "P2",
            "summary": f"{root} CPU above 85% of limit",
        }
    ]
    pages = []
    for n in callers:
        severity = "P1" if n in PAGING else "P2"
        alerts.append(
            {
                "service": n,
                "metric": "error_rate",
                "above": 0.05,
                "severity": severity,
                "summary": f"{n} 5xx rate above 5%",
            }
        )
        if severity == "P1":
            pages.append(f"{n} 5xx above 5%")
    if root == "api-gateway":
        alerts.append(
            {
                "service": root,
                "metric": "p99_ms",
                "above": 1000,
                "severity": "P1",
                "summary": f"{root} p99 above 1 s",
            }
        )
        pages.append("api-gateway p99 above 1 s")
    if "checkout-service" in affected:
        effects.setdefault("checkout-service", {})["business"] = -104.0
        alerts.append(
            {
                "service": "checkout-service",
                "metric": "business",
                "below": 108.0,
                "severity": "P1",
                "summary": "checkout completions below 60% of normal",
            }
        )
        pages.append("checkout completions far below normal")
    if "payment-service" in affected:
        effects.setdefault("payment-service", {})["business"] = -116.0
        alerts.append(
            {
                "service": "payment-service",
                "metric": "business",
                "below": 120.0,
                "severity": "P1",
                "summary": "captured charges below 60% of normal",
            }
        )
        pages.append("captured charges far below normal")
    if source.queue:
        alerts.append(
            {
                "service": root,
                "metric": "queue_depth",
                "above": 300,
                "severity": "P2",
                "summary": f"{root} {source.queue} backlog above 300",
            }
        )
        pages.append(f"{root} {source.queue} backlog growing")
    if not pages:
        pages = [f"{n} 5xx above 5%" for n in callers] or [f"{root} CPU above 85%"]
    state = [
        {
            "name": f"{root} runs at least {required} replicas",
            "kind": "replicas_at_least",
            "service": root,
            "replicas": required,
        },
        *({"name": f"{n} healthy", "kind": "healthy", "service": n} for n in [root, *callers]),
    ]
    upstream = callers[len(direct) :]
    summary = (
        f"{source.summary.capitalize()} raised {root}'s request rate to {factor}x the same hour"
        f" last week: its CPU saturated on {replicas} {kind}, requests queued for a worker and its"
        f" callers ({', '.join(direct) or 'the clients'}) timed out"
        + (f", which paged {', '.join(upstream)} upstream" if upstream else "")
        + f". Fix: scale {root} from {replicas} to at least {required} replicas (ceil({replicas} x"
        f" {factor} / 1.3): one replica saturates at 1.3x its usual load, LT-42); a restart adds"
        " no capacity and the recent releases are innocent."
    )
    if root in DATABASES or len(callers) >= 4:
        difficulty = "hard"
    else:
        difficulty = "easy" if len(callers) <= 1 else "medium"
    return {
        "key": f"{root.split('-')[0]}-{'lag' if source.queue else source.kind}",
        "category": "consumer_lag" if source.queue else "capacity",
        "queues": [{"name": source.queue, "service": root, "depth": depth}] if source.queue else [],
        "difficulty": difficulty,
        "service": root,
        "source": source.kind,
        "factor": str(factor),
        "replicas": replicas,
        "required": required,
        "has": has,
        "effects": effects,
        "logs": logs,
        "alerts": alerts,
        "page": "; ".join(pages[:4]),
        "customers": (
            f"No errors upstream, but the work behind {source.queue} is running late."
            if source.queue
            else "Customers report slow or failed pages and timeouts."
        ),
        "symptoms": callers,
        "state": state,
        "terminal": source.terminal,
        "summary": summary,
    }


def axes() -> str:
    """The main axis."""
    return fault_axis([fault_table(i, s) for i, s in enumerate(SOURCES)])
