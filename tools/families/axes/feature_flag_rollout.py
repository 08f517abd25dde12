"""Writes feature-flag-rollout's generated tables: the `[[variants.fault]]` axis.

Each table is one flag that breaks when ramped: its owner, what it turns on, the owner's errors
(which name the flag, in the evidence vocabulary's words "feature flag <name>"), the errors of
the caller that pages when the owner does not (which name the owner), the metrics it moves, and
two red-herring flags: `sibling`, another flag of the same owner, and `decoy`, a flag of another
service (declared and changed harmlessly when the seed's herring axis says so). Run after
changing a row:

    python -m tools.families regenerate feature_flag_rollout
"""

# ruff: noqa: E501  # the rows hold whole log lines; split, they no longer read as logs

from __future__ import annotations

from ..authoring import SCENARIOS, TomlStyle, fault_axis

HERE = SCENARIOS / "feature_flag_rollout"

# (flag, owner, description, observer ("" when the owner pages itself), the observer's caller
#  that also alerts, difficulty, owner's error lines, observer's error lines, added metrics,
#  sibling flag (same owner), decoy flag (another flag of the table set, so another owner))
ROWS = [
    (
        "search.semantic_rerank",
        "search-api",
        "Rerank the top 50 hits with the embedding model",
        "api-gateway",
        "edge-proxy",
        "easy",
        [
            "flag search.semantic_rerank: rerank failed: EmbeddingTimeout: embedding model answered in 0 of 50 slots within 800 ms",
            "GET /v2/search 504 after 2400 ms: rerank stage timed out (feature flag search.semantic_rerank)",
        ],
        ["upstream search-api timed out on GET /v2/search (2400 ms); answering 504"],
        {
            "search-api": {"error_rate": 0.31, "p99_ms": 2200},
            "api-gateway": {"error_rate": 0.08, "p99_ms": 600},
        },
        "search.typo_tolerance_v2",
        "gateway.request_coalescing",
    ),
    (
        "search.typo_tolerance_v2",
        "search-api",
        "Fuzzy matching v2: edit distance 2 on terms of 5+ letters",
        "api-gateway",
        "edge-proxy",
        "medium",
        [
            "flag search.typo_tolerance_v2: query parse failed: too_many_clauses: maxClauseCount is set to 1024 (fuzzy expansion)",
            "Traceback (most recent call last):",
            '  File "/srv/app/search_api/query.py", line 88, in build_fuzzy',
            "TooManyClauses: fuzzy expansion of 'wireless headphones' produced 3120 clauses",
        ],
        ["upstream search-api answered 500 on GET /v2/search; passing the error through"],
        {"search-api": {"error_rate": 0.27}, "api-gateway": {"error_rate": 0.07}},
        "search.semantic_rerank",
        "gateway.http2_upstreams",
    ),
    (
        "checkout.one_click_v2",
        "checkout-api",
        "One-click checkout with the customer's default stored card",
        "api-gateway",
        "edge-proxy",
        "easy",
        [
            "flag checkout.one_click_v2: POST /v2/checkout/one-click failed",
            "Traceback (most recent call last):",
            '  File "/srv/app/checkout_api/one_click.py", line 57, in place_order',
            "KeyError: 'default_card' (customers without a stored card take the one-click path)",
        ],
        ["upstream checkout-api answered 500 on POST /v2/checkout/one-click"],
        {
            "checkout-api": {"error_rate": 0.34, "business": -18},
            "api-gateway": {"error_rate": 0.09},
        },
        "checkout.split_shipments",
        "gateway.request_coalescing",
    ),
    (
        "checkout.split_shipments",
        "checkout-api",
        "Split carts into one shipment per warehouse",
        "",
        "",
        "medium",
        [
            "flag checkout.split_shipments: order total mismatch after split: shipments sum to 2 x shipping fee; order refused",
            "POST /v2/checkout 409: split shipment totals do not match the priced cart (feature flag checkout.split_shipments)",
        ],
        [],
        {"checkout-api": {"error_rate": 0.22, "business": -14}},
        "checkout.one_click_v2",
        "pricing.dynamic_discounts",
    ),
    (
        "catalog.bundle_pricing",
        "catalog-api",
        "Show bundle prices on item pages",
        "api-gateway",
        "edge-proxy",
        "medium",
        [
            "flag catalog.bundle_pricing: item page waited on 14 sequential price quotes for bundle members; deadline 1500 ms exceeded",
            "GET /v2/catalog/items/{id} 504: bundle quote fan-out timed out (feature flag catalog.bundle_pricing)",
        ],
        ["upstream catalog-api timed out on GET /v2/catalog/items; answering 504"],
        {
            "catalog-api": {"error_rate": 0.24, "p99_ms": 1600},
            "api-gateway": {"error_rate": 0.07, "p99_ms": 400},
        },
        "catalog.graphql_items",
        "search.semantic_rerank",
    ),
    (
        "catalog.graphql_items",
        "catalog-api",
        "Serve item pages from the GraphQL resolver",
        "api-gateway",
        "edge-proxy",
        "medium",
        [
            "flag catalog.graphql_items: resolver error on Item.variants",
            "Traceback (most recent call last):",
            '  File "/srv/app/catalog_api/graphql/items.py", line 131, in resolve_variants',
            "AttributeError: 'NoneType' object has no attribute 'sku' (items without variants)",
        ],
        ["upstream catalog-api answered 500 on GET /v2/catalog/items"],
        {"catalog-api": {"error_rate": 0.29}, "api-gateway": {"error_rate": 0.08}},
        "catalog.bundle_pricing",
        "gateway.http2_upstreams",
    ),
    (
        "pricing.dynamic_discounts",
        "pricing-service",
        "Stack dynamic discounts with promotions",
        "checkout-api",
        "api-gateway",
        "hard",
        [
            "flag pricing.dynamic_discounts: quote for cart with promo SPRING and dynamic discount stacked to 112%: total -4.37 EUR"
        ],
        [
            "refused quote from pricing-service: negative total -4.37 EUR for cart; checkout aborted",
            "POST /v2/checkout 422: pricing-service quote failed validation (total < 0)",
        ],
        {
            "checkout-api": {"error_rate": 0.26, "business": -20},
            "api-gateway": {"error_rate": 0.06},
        },
        "pricing.fx_rates_v2",
        "checkout.split_shipments",
    ),
    (
        "pricing.fx_rates_v2",
        "pricing-service",
        "Read FX rates from the new rates feed",
        "catalog-api",
        "api-gateway",
        "hard",
        [
            "flag pricing.fx_rates_v2: FX rate EUR->SEK missing from rates feed v2; quoting 0.00",
            "quote 0.00 SEK refused by own sanity check; answering 503 (feature flag pricing.fx_rates_v2)",
        ],
        ["pricing-service answered 503 for SEK and NOK quotes; item pages without prices"],
        {"pricing-service": {"error_rate": 0.18}, "catalog-api": {"error_rate": 0.21}},
        "pricing.dynamic_discounts",
        "catalog.bundle_pricing",
    ),
    (
        "media.chunked_uploads_v3",
        "media-api",
        "Resumable upload protocol v3 (8 MiB chunks)",
        "api-gateway",
        "edge-proxy",
        "easy",
        [
            "flag media.chunked_uploads_v3: PATCH /v2/uploads/{id} 416 Range Not Satisfiable: chunk offset 8388608 expected 8388607 (off-by-one in v3 offsets)",
            "upload session aborted after 3 rejected chunks (feature flag media.chunked_uploads_v3)",
        ],
        ["upstream media-api answered 416 on PATCH /v2/uploads; clients give up after 3 retries"],
        {"media-api": {"error_rate": 0.37}, "api-gateway": {"error_rate": 0.06}},
        "media.auto_captions",
        "search.typo_tolerance_v2",
    ),
    (
        "media.auto_captions",
        "media-api",
        "Request automatic captions for every new upload",
        "",
        "",
        "medium",
        [
            "flag media.auto_captions: caption job submit failed: transcoder refused job spec (unknown profile 'captions-asr')",
            "Traceback (most recent call last):",
            '  File "/srv/app/media_api/pipeline.py", line 74, in submit_jobs',
            "JobSpecError: unknown profile 'captions-asr'; upload left in state processing",
        ],
        [],
        {"media-api": {"error_rate": 0.28, "queue_depth": 40}},
        "media.chunked_uploads_v3",
        "cdn.av1_renditions",
    ),
    (
        "cdn.av1_renditions",
        "media-cdn",
        "Serve AV1 renditions to clients that decode AV1",
        "edge-proxy",
        "",
        "medium",
        [
            "flag cdn.av1_renditions: manifest lists AV1 renditions that were never transcoded; 404 for /v/*/av1/*.m4s",
            "origin fetch 404 for av1 segments (feature flag cdn.av1_renditions); playback stalls",
        ],
        ["upstream media-cdn answered 404 on video segments; playback errors"],
        {"media-cdn": {"error_rate": 0.33}, "edge-proxy": {"error_rate": 0.09}},
        "cdn.prefetch_next_segment",
        "media.auto_captions",
    ),
    (
        "cdn.prefetch_next_segment",
        "media-cdn",
        "Prefetch the next two segments on every request",
        "",
        "",
        "hard",
        [
            "flag cdn.prefetch_next_segment: prefetch requests outnumber client requests 2:1; origin connection limit reached",
            "origin fetch failed: connect to object-store: too many open connections (feature flag cdn.prefetch_next_segment)",
        ],
        [],
        {"media-cdn": {"error_rate": 0.2, "p99_ms": 900}},
        "cdn.av1_renditions",
        "media.chunked_uploads_v3",
    ),
    (
        "accounts.passkeys",
        "accounts-api",
        "Passkey (WebAuthn) sign-in",
        "api-gateway",
        "edge-proxy",
        "easy",
        [
            "flag accounts.passkeys: WebAuthn assertion verification failed: unsupported COSE algorithm -8 (Ed25519)",
            "POST /v2/sessions/passkey 500 (feature flag accounts.passkeys)",
        ],
        ["upstream accounts-api answered 500 on POST /v2/sessions/passkey"],
        {"accounts-api": {"error_rate": 0.25}, "api-gateway": {"error_rate": 0.05}},
        "accounts.profile_v2",
        "checkout.one_click_v2",
    ),
    (
        "auth.token_binding",
        "auth-service",
        "Bind access tokens to the client's TLS key (cnf claim)",
        "catalog-api",
        "api-gateway",
        "hard",
        [
            "flag auth.token_binding: issuing tokens with cnf.x5t#S256 for clients that present no certificate; the binding can never match"
        ],
        [
            "refused access tokens issued by auth-service: cnf thumbprint does not match the (absent) client certificate; answering 401",
            "401 on 38% of signed-in item page views",
        ],
        {"catalog-api": {"error_rate": 0.38}, "api-gateway": {"error_rate": 0.12}},
        "auth.refresh_rotation_strict",
        "catalog.graphql_items",
    ),
    (
        "auth.refresh_rotation_strict",
        "auth-service",
        "Revoke the session on any refresh token reuse",
        "api-gateway",
        "edge-proxy",
        "hard",
        [
            "flag auth.refresh_rotation_strict: refresh token reuse detected for 1,204 sessions in 10 min (parallel tabs refresh at once); sessions revoked"
        ],
        ["upstream auth-service answered 401 on POST /v2/token/refresh; users signed out"],
        {"auth-service": {"error_rate": 0.19}, "api-gateway": {"error_rate": 0.1}},
        "auth.token_binding",
        "accounts.passkeys",
    ),
    (
        "sso.idp_discovery",
        "sso-bridge",
        "Find the customer's IdP from the e-mail domain",
        "auth-service",
        "api-gateway",
        "medium",
        [
            "flag sso.idp_discovery: no IdP mapping for domain of 61% of enterprise users (lookup keyed by the full address, not the domain)"
        ],
        ["sso-bridge answered 404 no-idp for enterprise logins; users sent back to the login page"],
        {"auth-service": {"error_rate": 0.17}, "api-gateway": {"error_rate": 0.05}},
        "sso.saml_encrypted_assertions",
        "accounts.passkeys",
    ),
    (
        "mfa.push_approvals",
        "mfa-service",
        "Approve sign-ins with a push notification",
        "auth-service",
        "api-gateway",
        "medium",
        [
            "flag mfa.push_approvals: push provider answered 403 InvalidProviderToken for every approval request; challenges never complete"
        ],
        ["mfa-service second factor timed out for push-enrolled users; sign-in failed"],
        {"mfa-service": {"error_rate": 0.41}, "auth-service": {"error_rate": 0.15}},
        "mfa.remember_device_30d",
        "auth.refresh_rotation_strict",
    ),
    (
        "notify.batch_digest",
        "notify-api",
        "Send one daily digest instead of single notifications",
        "",
        "",
        "medium",
        [
            "flag notify.batch_digest: digest build failed",
            "Traceback (most recent call last):",
            '  File "/srv/app/notify_api/digest.py", line 42, in build',
            "TypeError: 'NoneType' object is not iterable (users with no preferences row)",
        ],
        [],
        {"notify-api": {"error_rate": 0.32, "queue_depth": 30}},
        "notify.sms_fallback",
        "webhooks.parallel_delivery",
    ),
    (
        "webhooks.parallel_delivery",
        "webhook-dispatcher",
        "Deliver webhooks to one endpoint in parallel",
        "notify-api",
        "",
        "medium",
        [
            "flag webhooks.parallel_delivery: partners answer 409 out-of-order for order.updated before order.created; retries pile up",
            "delivery retry queue at 48,000 (feature flag webhooks.parallel_delivery)",
        ],
        [
            "webhook-dispatcher is not draining: 48,000 deliveries waiting; accepting no new webhook subscriptions"
        ],
        {
            "webhook-dispatcher": {"error_rate": 0.29, "queue_depth": 60},
            "notify-api": {"error_rate": 0.11},
        },
        "webhooks.payload_v2",
        "notify.batch_digest",
    ),
    (
        "payments.3ds2_frictionless",
        "payments-service",
        "Frictionless 3-D Secure 2 for low-risk cards",
        "checkout-api",
        "api-gateway",
        "medium",
        [
            "flag payments.3ds2_frictionless: acquirer declined capture: authentication data missing (ECI absent on frictionless path)",
            "capture declined for 3DS2 frictionless payments (feature flag payments.3ds2_frictionless)",
        ],
        ["payments-service declined card payments: authentication data missing; checkout failed"],
        {
            "payments-service": {"error_rate": 0.36},
            "checkout-api": {"error_rate": 0.28, "business": -22},
        },
        "payments.network_tokens",
        "checkout.one_click_v2",
    ),
    (
        "payments.network_tokens",
        "payments-service",
        "Charge card network tokens instead of PANs",
        "checkout-api",
        "api-gateway",
        "hard",
        [
            "flag payments.network_tokens: cryptogram missing for network token charge; bank-gateway answered invalid_request",
            "Traceback (most recent call last):",
            '  File "/srv/app/payments_service/network_tokens.py", line 66, in charge',
            "CryptogramMissing: token tkn_**** has no cryptogram for this merchant",
        ],
        ["payments-service answered 502 on payment capture; order left unpaid"],
        {
            "payments-service": {"error_rate": 0.3},
            "checkout-api": {"error_rate": 0.24, "business": -18},
        },
        "payments.3ds2_frictionless",
        "pricing.fx_rates_v2",
    ),
    (
        "ledger.async_posting",
        "ledger-service",
        "Post journal entries asynchronously",
        "payments-service",
        "checkout-api",
        "hard",
        [
            "flag ledger.async_posting: balance read before the async posting landed: overdraft guard refused capture for 9% of payments"
        ],
        [
            "ledger-service refused journal entries: insufficient balance (stale read); captures rolled back"
        ],
        {"ledger-service": {"error_rate": 0.12}, "payments-service": {"error_rate": 0.19}},
        "ledger.daily_close_v2",
        "payments.network_tokens",
    ),
    (
        "inventory.soft_holds",
        "inventory-service",
        "Hold stock softly during checkout (no row lock)",
        "checkout-api",
        "api-gateway",
        "medium",
        [
            "flag inventory.soft_holds: oversold: 3 holds granted for 1 remaining unit of sku-88213; payment captured for orders that cannot ship"
        ],
        [
            "inventory-service hold confirmation failed at payment: stock no longer available; order cancelled"
        ],
        {"checkout-api": {"error_rate": 0.21, "business": -12}},
        "inventory.reservation_ttl_v2",
        "checkout.split_shipments",
    ),
    (
        "transcode.gpu_hevc",
        "transcoder",
        "Encode HEVC renditions on GPU",
        "media-api",
        "api-gateway",
        "medium",
        [
            "flag transcode.gpu_hevc: NVENC OpenEncodeSessionEx failed: session limit reached (3 per GPU), job failed",
            "rendition hevc-1080p failed on 100% of GPU workers (feature flag transcode.gpu_hevc)",
        ],
        ["transcoder failed renditions for new uploads; uploads stuck in processing"],
        {"transcoder": {"error_rate": 0.45}, "media-api": {"error_rate": 0.14}},
        "transcode.per_title_ladder",
        "media.chunked_uploads_v3",
    ),
    (
        "gateway.request_coalescing",
        "api-gateway",
        "Coalesce identical concurrent GETs",
        "edge-proxy",
        "",
        "hard",
        [
            "flag gateway.request_coalescing: coalescing leader timed out; 212 waiters failed with 504",
            "coalesced GET /v2/catalog/items waiters all failed when the leader's upstream call timed out (feature flag gateway.request_coalescing)",
        ],
        ["upstream api-gateway answered 504 in bursts"],
        {"api-gateway": {"error_rate": 0.16, "p99_ms": 900}, "edge-proxy": {"error_rate": 0.09}},
        "gateway.http2_upstreams",
        "catalog.graphql_items",
    ),
    (
        "ingest.schema_v5",
        "analytics-ingest",
        "Validate events against schema v5",
        "",
        "",
        "easy",
        [
            "flag ingest.schema_v5: dropping events: field 'session_id' required by schema v5, absent from mobile clients",
            "dropped 100% of mobile events in the last minute (feature flag ingest.schema_v5)",
        ],
        [],
        {"analytics-ingest": {"error_rate": 0.58}},
        "ingest.dedupe_window_v2",
        "notify.batch_digest",
    ),
    (
        "scheduler.sharded_leases",
        "scheduler",
        "Shard job leases across scheduler replicas",
        "notify-api",
        "",
        "hard",
        [
            "flag scheduler.sharded_leases: job digest-eu fired twice: both replicas hold a lease for shard 3",
            "duplicate firing detected for 14 jobs (feature flag scheduler.sharded_leases)",
        ],
        ["refused duplicate scheduled-send triggers from scheduler; digest sends double-booked"],
        {"notify-api": {"error_rate": 0.23}},
        "scheduler.catch_up_missed",
        "notify.batch_digest",
    ),
]


def _owners() -> dict[str, str]:
    """Every flag the tables name (bad, sibling or decoy) and its owner."""
    owner = {row[0]: row[1] for row in ROWS}
    for row in ROWS:
        owner.setdefault(row[9], row[1])
    return owner


def tables() -> list[dict[str, object]]:
    """The fault axis, one table per row."""
    owner_of = _owners()
    out: list[dict[str, object]] = []
    for (
        flag,
        owner,
        description,
        observer,
        edge,
        difficulty,
        owner_lines,
        observer_lines,
        effects,
        sibling,
        decoy,
    ) in ROWS:
        out.append(
            {
                "key": flag,
                "flag": flag,
                "service": owner,
                "description": description,
                "observer": observer,
                "pager": observer or owner,
                "edge": edge,
                "difficulty": difficulty,
                "owner_lines": owner_lines,
                "observer_lines": observer_lines,
                "effects": effects,
                "symptoms": [s for s in effects if s != owner],
                "sibling": sibling,
                "decoy": decoy,
                "decoy_service": owner_of[decoy],
            }
        )
    return out


STYLE = TomlStyle(wrap_string_lists_over=80)
"""Long lists of log lines one item a line, so that a table reads (and diffs) line by line."""


def axes() -> str:
    """The main axis (and what follows from it)."""
    return fault_axis(tables(), STYLE)
