"""Grader checks for meta-sre/pii-exposure-v1 (never shown to agents).

FAIL_TO_PASS: a profile read by a caller without {support:read_pii} carries no raw phone number
or e-mail anywhere in the response, and shows the masked forms. PASS_TO_PASS: the API keeps
working: public fields, raw contact details for the support scope, the masking helpers,
404s and the delivery webhooks, and the other services are untouched.
"""

import asyncio
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


def _profile(scopes=()):
    return asyncio.run(SyncApi(MessageRepository(_Pool())).get_profile(USER["user_id"], scopes))


def _leaks(response):
    text = json.dumps(response, default=str)
    digits = "".join(ch for ch in text if ch.isdigit())
    phone_digits = "".join(ch for ch in USER["phone"] if ch.isdigit())
    found = [v for v in (USER["phone"], USER["email"]) if v in text]
    if phone_digits in digits:
        found.append("phone digits")
    if USER["email"].split("@")[0] in text:
        found.append("e-mail local part")
    return found


# --- FAIL_TO_PASS -------------------------------------------------------------------------


def test_profile_hides_contact_details_from_ordinary_callers():
    response = _profile()
    assert response["status"] == 200, response
    assert not _leaks(response), f"raw contact details in {response}"
    body = response["body"]
    assert body["phone"] == mask_phone(USER["phone"]), body
    assert body["email"] == mask_email(USER["email"]), body


def test_profile_hides_contact_details_from_other_scopes():
    for scopes in ({"messages:read"}, {"messages:read", "admin"}, {"support:read"}):
        response = _profile(scopes)
        assert response["status"] == 200 and not _leaks(response), (scopes, response)


# --- PASS_TO_PASS -------------------------------------------------------------------------


def test_profile_keeps_its_public_fields():
    body = _profile()["body"]
    for key in ("user_id", "display_name", "locale", "opted_in", "phone", "email"):
        assert key in body, f"profile lost {key}: {body}"
    assert body["display_name"] == USER["display_name"] and body["opted_in"] is True, body


def test_support_scope_still_sees_contact_details():
    body = _profile({config.PII_SCOPE})["body"]
    assert body["phone"] == USER["phone"] and body["email"] == USER["email"], (
        f"the support console ({config.PII_SCOPE}) must still see raw contact details: {body}"
    )


def test_masking_helpers_unchanged():
    assert mask_phone("+44 7700 900123") == "**********23"
    assert mask_email("jane.doe@example.com") == "j***@example.com"
    assert mask_email("nobody") == "***"
    masked = user_payload(User(**USER), reveal_pii=False)
    assert masked["phone"] == mask_phone(USER["phone"]), masked
    assert user_payload(User(**USER), reveal_pii=True)["email"] == USER["email"]


def test_unknown_user_is_404_without_records():
    response = asyncio.run(SyncApi(MessageRepository(_Pool())).get_profile("u-0"))
    assert response["status"] == 404 and not _leaks(response), response


def test_webhooks_still_work():
    pool = _Pool()
    api = SyncApi(MessageRepository(pool))

    async def scenario():
        inbound = {"message_id": "m1", "from": USER["user_id"], "text": "oi", "timestamp": 5}
        assert (await api.inbound_webhook(inbound))["body"]["duplicate"] is False
        assert (await api.inbound_webhook(inbound))["body"]["duplicate"] is True
        status = {"message_id": "m1", "status": "delivered", "timestamp": 6}
        assert (await api.status_webhook(status))["body"]["changed"] is True
        assert (await api.status_webhook({**status, "message_id": "nope"}))["status"] == 404
        assert (await api.status_webhook({**status, "status": "lost"}))["status"] == 400

    asyncio.run(scenario())
    assert pool.out == 0, "connections must all be released"


def test_capi_ingest_unchanged():
    from capi_pipeline import ConversionIngestor, InMemoryEventStore

    store = InMemoryEventStore()
    batch = [
        {"event_id": "x1", "event_name": "Purchase", "event_time": 1_717_000_000_500,
         "value": 5, "currency": "usd"},
        {"event_id": "x1", "event_name": "Purchase", "event_time": 1_717_000_000_500},
        {"event_id": "x2", "event_name": "Refund", "event_time": 1_717_000_000},
    ]
    result = ConversionIngestor(store).ingest(batch)
    assert (result.accepted, result.duplicates, len(result.rejected)) == (1, 1, 1), result


def test_ranking_unchanged():
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
    assert response["status"] == 200, response
    assert [ad["ad_id"] for ad in response["ads"]] == ["ad-a", "ad-b"], response
