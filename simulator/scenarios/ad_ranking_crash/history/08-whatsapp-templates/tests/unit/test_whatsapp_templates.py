"""Unit tests for outbound template messages and e-mail-only users (MSG-1180)."""

from whatsapp_sync import MessageRepository, SyncApi, mask_phone, repository
from whatsapp_sync.templates import TemplateError, render_template


def test_placeholders_are_one_based():
    assert render_template("{{2}} then {{1}}", ["a", "b"]) == "b then a"
    assert render_template("no placeholders", []) == "no placeholders"


def test_a_missing_parameter_is_refused():
    for params in ([], ["only-one"]):
        try:
            render_template("{{1}} and {{2}}", params)
        except TemplateError as exc:
            assert "#2" in str(exc) or "#1" in str(exc), exc
        else:
            raise AssertionError(f"expected TemplateError for {params!r}")


def test_users_without_a_phone_are_masked_as_empty():
    assert mask_phone(None) == "" and mask_phone("") == ""
    assert mask_phone("+44 7700 900123") == "**********23"


class _Conn:
    async def fetch_one(self, query, *args):
        if query == repository.SELECT_USER and args[0] == "u-1":
            return {"user_id": "u-1", "display_name": "Ana", "phone": None,
                    "email": "ana@example.com", "locale": "pt_BR", "opted_in": True}
        return None

    async def execute(self, query, *args):
        return 1


class _Pool:
    async def acquire(self):
        return _Conn()

    async def release(self, conn):
        return None


async def test_send_template():
    api = SyncApi(MessageRepository(_Pool()))
    ok = (await api.send_template({"to": "u-1", "template": "otp", "params": ["4821"]}))
    assert ok == {"status": 200, "body": {"to": "u-1", "text": "4821 is your verification code."}}
    unknown = (await api.send_template({"to": "u-9", "template": "otp", "params": ["1"]}))
    assert unknown["status"] == 404, unknown
    short = (await api.send_template({"to": "u-1", "template": "order_shipped"}))
    assert short["status"] == 400, short
    profile = (await api.get_profile("u-1"))
    assert profile["body"]["phone"] == "" and profile["body"]["email"] == "a***@example.com"
