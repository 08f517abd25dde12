"""Grader probes for meta-sre/pii-exposure-v1 (never shown to agents).

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

FAIL_TO_PASS: which raw contact details a profile read by a caller without {support:read_pii}
carries anywhere in the response, and the phone and e-mail fields it shows, with DEBUG as the
service has it and with DEBUG on. PASS_TO_PASS: the
public fields, raw contact details for the support scope, the masking helpers, 404s and the
delivery webhooks, and the other services.
"""

import json

from whatsapp_sync import MessageRepository, SyncApi, config, mask_email, mask_phone, repository
from whatsapp_sync import user_payload
from whatsapp_sync.repository import User

USER = {
    "user_id": "{{pii_user.id}}", "display_name": "{{pii_user.name}}",
    "phone": "{{pii_user.phone}}", "email": "{{pii_user.email}}",
    "locale": "{{pii_user.locale}}", "opted_in": True,
}


class _Conn:
    def __init__(self, messages):
        self.messages = messages

    async def fetch_one(self, query, *args):
        if query == repository.SELECT_USER:
            return dict(USER) if args[0] == USER["user_id"] else None
        if query == repository.SELECT_MESSAGE:
            return self.messages.get(args[0])
        return None

    async def execute(self, query, *args):
        status = args[1] if query == repository.UPDATE_STATUS else "received"
        self.messages[args[0]] = {"message_id": args[0], "status": status}
        return 1


class _Pool:
    def __init__(self):
        self.out = 0
        self.messages = {}

    async def acquire(self):
        self.out += 1
        return _Conn(self.messages)

    async def release(self, conn):
        self.out -= 1


async def _profile(scopes=()):
    return await SyncApi(MessageRepository(_Pool())).get_profile(USER["user_id"], scopes)


def _leaks(response):
    """Which raw contact details appear anywhere in `response`."""
    text = json.dumps(response, default=str)
    digits = "".join(ch for ch in text if ch.isdigit())
    phone_digits = "".join(ch for ch in USER["phone"] if ch.isdigit())
    found = [v for v in (USER["phone"], USER["email"]) if v in text]
    if phone_digits in digits:
        found.append("phone digits")
    if USER["email"].split("@")[0] in text:
        found.append("e-mail local part")
    return found


def _contact(response):
    """What a response shows: its status, what leaks, and its phone and e-mail fields."""
    body = response.get("body")
    body = body if isinstance(body, dict) else {}
    return {"status": response.get("status"), "leaks": _leaks(response),
            "phone": body.get("phone"), "email": body.get("email")}


# --- FAIL_TO_PASS -------------------------------------------------------------------------


async def profile_hides_contact_details_from_ordinary_callers():
    return _contact(await _profile())


async def profile_hides_contact_details_from_other_scopes():
    observed = {}
    for scopes in ({"messages:read"}, {"messages:read", "admin"}, {"support:read"}):
        observed[",".join(sorted(scopes))] = _contact(await _profile(scopes))
    return observed


async def profile_hides_contact_details_with_debug_on():
    # Debug mode is for shard routing: a fixed service masks contact details for ordinary
    # callers whether DEBUG is on or off, so switching the flag off alone does not fix it.
    saved = config.DEBUG
    config.DEBUG = True
    try:
        return _contact(await _profile())
    finally:
        config.DEBUG = saved


# --- PASS_TO_PASS -------------------------------------------------------------------------


async def profile_keeps_its_public_fields():
    body = (await _profile())["body"]
    keys = ("user_id", "display_name", "locale", "opted_in", "phone", "email")
    return {
        "missing": [key for key in keys if key not in body],
        "display_name": body.get("display_name"),
        "opted_in": body.get("opted_in"),
    }


async def support_scope_still_sees_contact_details():
    body = (await _profile({config.PII_SCOPE}))["body"]
    return {"phone": body.get("phone"), "email": body.get("email")}


def masking_helpers_unchanged():
    masked = user_payload(User(**USER), reveal_pii=False)
    revealed = user_payload(User(**USER), reveal_pii=True)
    return {
        "phone": mask_phone("+44 7700 900123"),
        "email": mask_email("jane.doe@example.com"),
        "email_without_domain": mask_email("nobody"),
        "user_phone_masked": mask_phone(USER["phone"]),
        "masked_payload_phone": masked["phone"],
        "revealed_payload_email": revealed["email"],
    }


async def unknown_user_is_404_without_records():
    response = await SyncApi(MessageRepository(_Pool())).get_profile("u-0")
    return {"status": response["status"], "leaks": _leaks(response)}


async def webhooks_still_work():
    pool = _Pool()
    api = SyncApi(MessageRepository(pool))
    inbound = {"message_id": "m1", "from": USER["user_id"], "text": "oi", "timestamp": 5}
    first = await api.inbound_webhook(inbound)
    again = await api.inbound_webhook(inbound)
    status = {"message_id": "m1", "status": "delivered", "timestamp": 6}
    changed = await api.status_webhook(status)
    unknown = await api.status_webhook({**status, "message_id": "nope"})
    invalid = await api.status_webhook({**status, "status": "lost"})
    return {
        "first_duplicate": first.get("body", {}).get("duplicate"),
        "again_duplicate": again.get("body", {}).get("duplicate"),
        "status_changed": changed.get("body", {}).get("changed"),
        "unknown_message": unknown["status"],
        "unknown_status": invalid["status"],
        "connections_out": pool.out,
    }


def capi_ingest_unchanged():
    from capi_pipeline import ConversionIngestor, InMemoryEventStore

    store = InMemoryEventStore()
    batch = [
        {"event_id": "x1", "event_name": "Purchase", "event_time": 1_717_000_000_500,
         "value": 5, "currency": "usd"},
        {"event_id": "x1", "event_name": "Purchase", "event_time": 1_717_000_000_500},
        {"event_id": "x2", "event_name": "Refund", "event_time": 1_717_000_000},
    ]
    result = ConversionIngestor(store).ingest(batch)
    return {"accepted": result.accepted, "duplicates": result.duplicates,
            "rejected": len(result.rejected)}


def ranking_unchanged():
    from ad_ranking import AdStats, InMemoryFeatureStore, handle_rank_request

    store = InMemoryFeatureStore([
        AdStats("ad-a", impressions=10_000, clicks=300, attributed_conversions=30),
        AdStats("ad-b", impressions=10_000, clicks=100, attributed_conversions=5),
    ])
    payload = {"candidates": [
        {"ad_id": "ad-b", "campaign_id": "c-1", "bid_micros": 1_000_000},
        {"ad_id": "ad-a", "campaign_id": "c-2", "bid_micros": 1_000_000},
    ]}
    response = handle_rank_request(payload, store)
    return {"status": response["status"],
            "order": [ad["ad_id"] for ad in response.get("ads") or []]}
