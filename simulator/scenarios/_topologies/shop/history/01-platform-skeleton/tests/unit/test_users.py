"""Unit tests of user-service: own-profile access, updates, the profile cache."""

from shop_common import InProcessTransport, Request, Response
from user_service import InMemoryUserStore, ProfileCache, UserApp


class RecordingAuth:
    def __init__(self):
        self.revoked = []

    def handle(self, request):
        self.revoked.append(request.body["user_id"])
        return Response(200, {"revoked": True})


def _app(auth=None):
    store = InMemoryUserStore({"u-1": {"email": "ana@example.com", "display_name": "Ana",
                                       "locale": "en-GB"}})
    transport = InProcessTransport({"auth-service": auth} if auth else {})
    return UserApp(store, transport)


def test_read_own_profile():
    answer = _app().handle(Request("GET", "/v1/users/u-1", headers={"X-User-Id": "u-1"}))
    assert answer.status == 200 and answer.body["display_name"] == "Ana", answer


def test_cannot_read_someone_else():
    answer = _app().handle(Request("GET", "/v1/users/u-1", headers={"X-User-Id": "u-2"}))
    assert answer.status == 403, answer


def test_update_is_visible_on_next_read():
    app = _app()
    me = {"X-User-Id": "u-1"}
    app.handle(Request("GET", "/v1/users/u-1", headers=me))  # warms the cache
    app.handle(Request("PATCH", "/v1/users/u-1", {"display_name": "Ana B."}, me))
    answer = app.handle(Request("GET", "/v1/users/u-1", headers=me))
    assert answer.body["display_name"] == "Ana B.", answer


def test_email_change_revokes_sessions():
    auth = RecordingAuth()
    app = _app(auth)
    app.handle(Request("PATCH", "/v1/users/u-1", {"email": "ana@new.example"}, {"X-User-Id": "u-1"}))
    assert auth.revoked == ["u-1"], auth.revoked


def test_unknown_field_is_rejected():
    answer = _app().handle(Request("PATCH", "/v1/users/u-1", {"is_admin": True}, {"X-User-Id": "u-1"}))
    assert answer.status == 422, answer


def test_cache_evicts_least_recently_used():
    cache = ProfileCache(max_entries=2)
    cache.put("a", {})
    cache.put("b", {})
    cache.get("a")
    cache.put("c", {})
    assert cache.get("b") is None and cache.get("a") is not None and len(cache) == 2
