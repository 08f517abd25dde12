"""Security: whatsapp_sync API responses never carry a user's raw phone number or e-mail
to a caller without the PII scope."""

import asyncio
import json

from whatsapp_sync import MessageRepository, SyncApi
from whatsapp_sync import repository

USER = {
    "user_id": "u-77", "display_name": "Casa Lima", "phone": "+55 11 91234-5678",
    "email": "contato@casalima.example", "locale": "pt_BR", "opted_in": True,
}


class FakeConnection:
    async def fetch_one(self, query, *args):
        if query == repository.SELECT_USER:
            return dict(USER) if args[0] == USER["user_id"] else None
        return None

    async def execute(self, query, *args):
        return 1


class FakePool:
    async def acquire(self):
        return FakeConnection()

    async def release(self, conn):
        pass


def _leaks(response):
    """The PII fragments found anywhere in the serialised response."""
    text = json.dumps(response)
    digits = "".join(ch for ch in text if ch.isdigit())
    raw_digits = "".join(ch for ch in USER["phone"] if ch.isdigit())
    found = [value for value in (USER["phone"], USER["email"]) if value in text]
    if raw_digits in digits:
        found.append(f"phone digits {raw_digits}")
    if USER["email"].split("@")[0] in text:
        found.append("e-mail local part")
    return found


def _api():
    return SyncApi(MessageRepository(FakePool()))


def test_profile_response_has_no_raw_pii():
    response = asyncio.run(_api().get_profile("u-77"))
    assert response["status"] == 200, response
    leaks = _leaks(response)
    assert not leaks, f"GET /v1/users/u-77 without the PII scope leaks {leaks}: {response}"


def test_profile_for_other_scopes_has_no_raw_pii():
    response = asyncio.run(_api().get_profile("u-77", scopes={"messages:read", "admin"}))
    assert not _leaks(response), f"non-PII scopes must not reveal contact details: {response}"


def test_not_found_response_does_not_echo_records():
    response = asyncio.run(_api().get_profile("u-78"))
    assert response["status"] == 404 and not _leaks(response), response
