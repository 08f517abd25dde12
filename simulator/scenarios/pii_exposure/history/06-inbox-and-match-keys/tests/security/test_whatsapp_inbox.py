"""Security: no view of a user carries raw contact details to a caller without the PII scope:
the masks themselves, profiles for every non-PII scope, the inbox's contact cards, search
hits, exports and notifications, and the audit trail in the shared log pipeline."""

import asyncio
import json
import logging

from whatsapp_sync import MessageRepository, SyncApi, config, repository
from whatsapp_sync.contacts import contact_card, export_row, notification, search_hit
from whatsapp_sync.masking import mask_email, mask_phone
from whatsapp_sync.repository import User

RAW = {
    "user_id": "u-31", "display_name": "Loja Azul", "phone": "+55 31 98877-6655",
    "email": "pedidos.lojaazul@mail.example", "locale": "pt_BR", "opted_in": True,
}
SCOPES = ((), ("messages:read",), ("messages:read", "admin"), ("support:read",))


def _leaks(anything):
    text = json.dumps(anything, default=str)
    digits = "".join(ch for ch in text if ch.isdigit())
    found = []
    if "".join(ch for ch in RAW["phone"] if ch.isdigit())[:-2] in digits:
        found.append("phone digits")
    if RAW["email"].split("@")[0] in text:
        found.append("e-mail local part")
    return found


class FakeConnection:
    async def fetch_one(self, query, *args):
        if query == repository.SELECT_USER and args[0] == RAW["user_id"]:
            return dict(RAW)
        return None

    async def execute(self, query, *args):
        return 1


class FakePool:
    async def acquire(self):
        return FakeConnection()

    async def release(self, conn):
        pass


def test_masks_keep_two_digits_and_the_first_letter():
    assert mask_phone("+44 7700 900123") == "**********23", mask_phone("+44 7700 900123")
    assert mask_email("jane.doe@example.com") == "j***@example.com", mask_email("jane.doe@example.com")


def test_profile_for_every_non_pii_scope_has_no_raw_contact_details():
    api = SyncApi(MessageRepository(FakePool()))
    for scopes in SCOPES:
        response = asyncio.run(api.get_profile(RAW["user_id"], set(scopes)))
        assert not _leaks(response), f"scopes {scopes} see {_leaks(response)}: {response}"


def test_debug_mode_does_not_reveal_contact_details():
    saved, config.DEBUG = config.DEBUG, True
    try:
        response = asyncio.run(SyncApi(MessageRepository(FakePool())).get_profile(RAW["user_id"]))
    finally:
        config.DEBUG = saved
    assert not _leaks(response), f"DEBUG on leaks {_leaks(response)}: {response}"


def test_inbox_views_have_no_raw_contact_details():
    user = User(**RAW)
    for scopes in SCOPES:
        for view in (contact_card(user, set(scopes)), export_row(user, set(scopes))):
            assert not _leaks(view), f"scopes {scopes}: {view}"
    for view in (search_hit(user), notification(user, "oi, tudo bem?")):
        assert not _leaks(view), view


def test_support_scope_still_sees_contact_details():
    user = User(**RAW)
    card = contact_card(user, {config.PII_SCOPE})
    assert (card["phone"], card["email"]) == (RAW["phone"], RAW["email"]), card


def test_audit_trail_has_no_raw_contact_details():
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(dict(vars(record), message=record.getMessage()))

    logger = logging.getLogger("whatsapp_sync")
    handler, level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        asyncio.run(SyncApi(MessageRepository(FakePool())).get_profile(RAW["user_id"]))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert records, "a profile read must leave an audit record"
    for record in records:
        assert not _leaks(record), f"audit record leaks {_leaks(record)}: {record['message']}"
