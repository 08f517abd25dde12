"""Grader probes for meta-sre/pii-exposure-v2 (never shown to agents).

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

One probe per place contact details can come out: the profile API (ordinary callers, other
scopes, DEBUG on), the masking helpers, the inbox's contact cards, search hits, exports and
notifications, the profile-read audit trail, and capi_pipeline's match keys, ingest answers and
logs. Each observes which raw fragments of the seed's fixture appear anywhere in what comes
out, and the fields it shows. The seed's exposure makes some of them FAIL_TO_PASS; the rest,
and the webhooks, ingest and ranking, are PASS_TO_PASS.
"""

import contextlib
import json
import logging

from whatsapp_sync import MessageRepository, SyncApi, config, repository
from whatsapp_sync import mask_email, mask_phone, user_payload
from whatsapp_sync.repository import User

USER = {
    "user_id": "{{pii_user.id}}", "display_name": "{{pii_user.name}}",
    "phone": "{{pii_user.phone}}", "email": "{{pii_user.email}}",
    "locale": "{{pii_user.locale}}", "opted_in": True,
}
CUSTOMER = {"em": "{{customer.em}}", "ph": "{{customer.ph}}", "external_id": "{{customer.ext}}"}
OTHER_SCOPES = ({"messages:read"}, {"messages:read", "admin"}, {"support:read"},
                {"support:write", "messages:read"})


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


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


@contextlib.contextmanager
def _logged(name):
    """Collect what loggers under `name` record inside the block: message and extra fields."""
    logger = logging.getLogger(name)
    handler, level = _Capture(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    records = []
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        records += [{"message": r.getMessage(),
                     "fields": {k: v for k, v in vars(r).items() if k not in _STANDARD}}
                    for r in handler.records]


def _digits(text):
    return "".join(ch for ch in text if ch.isdigit())


def _leaks(anything, person=USER, keys=("phone", "email")):
    """Which raw fragments of `person`'s contact details appear anywhere in `anything`."""
    text = json.dumps(anything, default=str, sort_keys=True)
    found = []
    for key in keys:
        value = person[key]
        if value in text or value.lower() in text.lower():
            found.append(key)
        if "@" in value:
            if value.split("@")[0].lower() in text.lower():
                found.append(f"{key} local part")
        elif len(_digits(value)) > 6 and _digits(value)[:-2] in _digits(text):
            found.append(f"{key} digits")
    return found


def _user():
    return User(**USER)


async def _profile(scopes=()):
    return await SyncApi(MessageRepository(_Pool())).get_profile(USER["user_id"], scopes)


def _shown(response):
    """A response's status, its leaks anywhere, and the fields of its body but the debug block."""
    body = response.get("body")
    body = body if isinstance(body, dict) else {}
    return {"status": response.get("status"), "leaks": _leaks(response),
            "fields": {k: v for k, v in sorted(body.items()) if k != "debug"}}


# --- the profile API --------------------------------------------------------------------------


async def profile_hides_contact_details_from_ordinary_callers():
    return _shown(await _profile())


async def profile_hides_contact_details_from_other_scopes():
    return {",".join(sorted(s)): _shown(await _profile(s)) for s in OTHER_SCOPES}


async def profile_hides_contact_details_with_debug_on():
    # Debug mode is for shard routing: a fixed service masks contact details for ordinary
    # callers whether DEBUG is on or off.
    saved = config.DEBUG
    config.DEBUG = True
    try:
        return {"no scopes": _shown(await _profile()),
                "messages:read": _shown(await _profile({"messages:read"}))}
    finally:
        config.DEBUG = saved


async def support_scope_still_sees_contact_details():
    body = (await _profile({config.PII_SCOPE}))["body"]
    return {"phone": body.get("phone"), "email": body.get("email"),
            "display_name": body.get("display_name")}


def masking_helpers_unchanged():
    masked = user_payload(_user(), reveal_pii=False)
    revealed = user_payload(_user(), reveal_pii=True)
    return {
        "phone": mask_phone("+44 7700 900123"),
        "email": mask_email("jane.doe@example.com"),
        "email_without_domain": mask_email("nobody"),
        "user_phone_masked": mask_phone(USER["phone"]),
        "user_email_masked": mask_email(USER["email"]),
        "masked_payload": {k: masked[k] for k in sorted(masked)},
        "revealed_payload": {k: revealed[k] for k in sorted(revealed)},
    }


async def unknown_user_is_404_without_records():
    response = await SyncApi(MessageRepository(_Pool())).get_profile("u-0")
    return {"status": response["status"], "leaks": _leaks(response)}


# --- the inbox ----------------------------------------------------------------------------------


def contact_card_masks_contact_details():
    from whatsapp_sync.contacts import contact_card

    observed = {"no scopes": contact_card(_user())}
    for scopes in OTHER_SCOPES:
        observed[",".join(sorted(scopes))] = contact_card(_user(), scopes)
    return {"leaks": {k: _leaks(v) for k, v in observed.items()}, "cards": observed,
            "support": contact_card(_user(), {config.PII_SCOPE})}


def search_hit_shows_no_contact_details():
    from whatsapp_sync.contacts import search_hit

    hit = search_hit(_user())
    return {"leaks": _leaks(hit), "hit": hit}


def export_rows_mask_contact_details():
    from whatsapp_sync.contacts import export_row

    rows = {"no scopes": export_row(_user())}
    for scopes in OTHER_SCOPES:
        rows[",".join(sorted(scopes))] = export_row(_user(), scopes)
    return {"leaks": {k: _leaks(v) for k, v in rows.items()}, "rows": rows,
            "support": export_row(_user(), {config.PII_SCOPE})}


def notification_shows_no_contact_details():
    from whatsapp_sync.contacts import notification

    note = notification(_user(), "Olá! Vocês entregam no sábado de manhã? Preciso de 40 pães")
    return {"leaks": _leaks(note), "notification": note}


async def audit_trail_is_masked():
    with _logged("whatsapp_sync") as records:
        for scopes in ((), {"messages:read"}, {config.PII_SCOPE}, {"support:read"}):
            await _profile(scopes)
    return [{"message": r["message"], "leaks": _leaks(r),
             "user_id": r["fields"].get("user_id"), "scopes": r["fields"].get("scopes"),
             "fields": sorted(r["fields"])} for r in records]


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


# --- capi_pipeline's match keys -----------------------------------------------------------------

_CAPI_KEYS = ("em", "ph", "external_id")


def _batch():
    base = {"event_name": "Purchase", "event_time": 1_717_000_000, "value": 12.5,
            "currency": "BRL"}
    return [
        {**base, "event_id": "e-1", "user_data": dict(CUSTOMER)},
        {**base, "event_id": "e-2", "user_data": {"em": CUSTOMER["em"].upper()}},
        {**base, "event_id": "e-3", "user_data": {"ph": CUSTOMER["ph"]}},
        {**base, "event_id": "e-4", "currency": "XXX", "user_data": dict(CUSTOMER)},
        {**base, "event_id": "e-5",
         "user_data": {"em": CUSTOMER["em"].replace("@", "@@"), "ph": CUSTOMER["ph"]}},
        {**base, "event_id": "e-6", "user_data": {"external_id": CUSTOMER["external_id"]}},
    ]


def capi_match_keys_are_hashed():
    from capi_pipeline.match_keys import match_keys

    observed = {}
    for name, user_data in (("all", CUSTOMER), ("em", {"em": " " + CUSTOMER["em"].upper()}),
                            ("ph", {"ph": CUSTOMER["ph"]}),
                            ("external_id", {"external_id": CUSTOMER["external_id"]})):
        keys = match_keys(user_data)
        observed[name] = {"keys": dict(sorted(keys.items())),
                          "leaks": _leaks(keys, CUSTOMER, _CAPI_KEYS)}
    return observed


def capi_ingest_answers_and_stores_no_raw_contact_details():
    from capi_pipeline.match_keys import MatchKeyIngestor

    ingestor = MatchKeyIngestor()
    accepted, rejected = ingestor.ingest(_batch())
    return {
        "accepted": accepted,
        "rejected": len(rejected),
        "rejections_name_their_event": [r.split(":")[0] for r in rejected],
        "rejection_leaks": [_leaks(r, CUSTOMER, _CAPI_KEYS) for r in rejected],
        "rows": ingestor.rows,
        "row_leaks": [_leaks(r, CUSTOMER, _CAPI_KEYS) for r in ingestor.rows],
    }


def capi_logs_carry_no_raw_contact_details():
    from capi_pipeline.match_keys import MatchKeyIngestor

    with _logged("capi_pipeline") as records:
        MatchKeyIngestor().ingest(_batch())
    return [{"message": r["message"], "leaks": _leaks(r, CUSTOMER, _CAPI_KEYS),
             "fields": sorted(r["fields"]),
             "event_id": r["fields"].get("event_id")} for r in records]


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
