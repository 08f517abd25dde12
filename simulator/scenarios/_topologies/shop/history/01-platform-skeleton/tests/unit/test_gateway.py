"""Unit tests of the api-gateway: routing, authentication, upstream failure mapping."""

from api_gateway import Gateway
from auth_service import AuthApp, InMemoryCredentials, InMemoryRevocations
from auth_service import tokens
from shop_common import InProcessTransport, Request, Response, UpstreamTimeout

NOW = 1_700_000_000.0


class EchoApp:
    """An upstream that answers 200 with what it received."""

    def handle(self, request):
        return Response(200, {"path": request.path, "user": request.header("X-User-Id")})


class BrokenApp:
    """An upstream that answers 503, like a pod failing its requests."""

    def handle(self, request):
        return Response(503, {"error": {"code": "unavailable", "message": "down"}})


class SlowTransport(InProcessTransport):
    def send(self, service, request, timeout_s=5.0):
        if service == "user-service":
            raise UpstreamTimeout(service, "deadline exceeded")
        return super().send(service, request, timeout_s)


def _auth():
    return AuthApp(InMemoryCredentials(iterations=1), InMemoryRevocations(), clock=lambda: NOW)


def _bearer(user="u-1"):
    return {"Authorization": "Bearer " + tokens.issue(user, NOW)}


def test_routes_by_prefix_and_sets_user_header():
    transport = InProcessTransport({"auth-service": _auth(), "user-service": EchoApp()})
    answer = Gateway(transport).handle(Request("GET", "/v1/users/u-1", headers=_bearer()))
    assert answer.status == 200, answer
    assert answer.body == {"path": "/v1/users/u-1", "user": "u-1"}, answer.body


def test_client_cannot_spoof_user_header():
    transport = InProcessTransport({"auth-service": _auth(), "user-service": EchoApp()})
    headers = {**_bearer("u-1"), "x-user-id": "admin"}
    answer = Gateway(transport).handle(Request("GET", "/v1/users/u-1", headers=headers))
    assert answer.body["user"] == "u-1", answer.body


def test_missing_token_is_401():
    transport = InProcessTransport({"auth-service": _auth(), "user-service": EchoApp()})
    answer = Gateway(transport).handle(Request("GET", "/v1/users/u-1"))
    assert answer.status == 401, answer


def test_forged_token_is_401():
    transport = InProcessTransport({"auth-service": _auth(), "user-service": EchoApp()})
    forged = {"Authorization": "Bearer " + tokens.issue("u-1", NOW, key="not-the-key")}
    answer = Gateway(transport).handle(Request("GET", "/v1/users/u-1", headers=forged))
    assert answer.status == 401, answer


def test_unknown_path_is_404():
    answer = Gateway(InProcessTransport()).handle(Request("GET", "/v2/nothing"))
    assert answer.status == 404, answer


def test_upstream_5xx_becomes_502():
    transport = InProcessTransport({"auth-service": _auth(), "user-service": BrokenApp()})
    answer = Gateway(transport).handle(Request("GET", "/v1/users/u-1", headers=_bearer()))
    assert answer.status == 502, answer
    assert answer.body["error"]["code"] == "bad_gateway", answer.body


def test_upstream_without_endpoints_becomes_502():
    transport = InProcessTransport({"auth-service": _auth()})
    answer = Gateway(transport).handle(Request("GET", "/v1/users/u-1", headers=_bearer()))
    assert answer.status == 502, answer


def test_upstream_timeout_becomes_504():
    transport = SlowTransport({"auth-service": _auth()})
    answer = Gateway(transport).handle(Request("GET", "/v1/users/u-1", headers=_bearer()))
    assert answer.status == 504, answer


def test_healthz_needs_no_upstream():
    answer = Gateway(InProcessTransport()).handle(Request("GET", "/healthz"))
    assert answer.status == 200, answer
