"""Unit tests of auth-service: tokens, login, verification, revocation."""

from auth_service import AuthApp, InMemoryCredentials, InMemoryRevocations
from auth_service import tokens
from shop_common import Request


class Clock:
    def __init__(self, now=1_700_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


def _app(clock):
    credentials = InMemoryCredentials(iterations=1)
    credentials.add("u-1", "correct horse")
    return AuthApp(credentials, InMemoryRevocations(), clock=clock, iterations=1)


def test_token_round_trip():
    token = tokens.issue("u-1", 1000.0, key="k", ttl_s=60)
    assert tokens.verify(token, 1030.0, key="k") == ("u-1", 1060), token


def test_expired_token_is_rejected():
    token = tokens.issue("u-1", 1000.0, key="k", ttl_s=60)
    try:
        tokens.verify(token, 1060.0, key="k")
    except tokens.InvalidToken:
        return
    raise AssertionError("an expired token was accepted")


def test_tampered_token_is_rejected():
    token = tokens.issue("u-1", 1000.0, key="k", ttl_s=60)
    forged = "admin" + token[len("u-1"):]
    try:
        tokens.verify(forged, 1001.0, key="k")
    except tokens.InvalidToken:
        return
    raise AssertionError("a token with a changed user id was accepted")


def test_login_then_verify():
    clock = Clock()
    app = _app(clock)
    login = app.handle(Request("POST", "/v1/auth/login", {"user_id": "u-1", "password": "correct horse"}))
    assert login.status == 200, login
    check = app.handle(Request("POST", "/v1/auth/verify", {"token": login.body["token"]}))
    assert check.status == 200 and check.body["user_id"] == "u-1", check


def test_wrong_password_is_401():
    app = _app(Clock())
    login = app.handle(Request("POST", "/v1/auth/login", {"user_id": "u-1", "password": "nope"}))
    assert login.status == 401, login


def test_revoke_voids_earlier_tokens():
    clock = Clock()
    app = _app(clock)
    token = app.handle(Request("POST", "/v1/auth/login",
                               {"user_id": "u-1", "password": "correct horse"})).body["token"]
    clock.now += 10
    assert app.handle(Request("POST", "/v1/auth/revoke", {"user_id": "u-1"})).status == 200
    check = app.handle(Request("POST", "/v1/auth/verify", {"token": token}))
    assert check.status == 401, check
