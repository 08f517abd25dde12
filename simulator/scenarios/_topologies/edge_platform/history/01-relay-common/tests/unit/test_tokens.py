from relay_common import tokens

KEY = b"test-key"
NOW = 1_760_000_000


def test_a_fresh_token_verifies():
    token = tokens.issue("u-1", "catalog-api", ["read"], KEY, NOW)
    claims = tokens.verify(token, KEY, "catalog-api", NOW + 5)
    assert claims["sub"] == "u-1", claims


def test_an_issuer_ahead_beyond_the_leeway_is_refused():
    token = tokens.issue("u-1", "catalog-api", ["read"], KEY, NOW + 120)
    try:
        tokens.verify(token, KEY, "catalog-api", NOW)
    except tokens.NotYetValid:
        return
    raise AssertionError("a token from 120 s in the future was accepted")


def test_small_drift_is_within_the_leeway():
    token = tokens.issue("u-1", "catalog-api", ["read"], KEY, NOW + 20)
    assert tokens.verify(token, KEY, "catalog-api", NOW)["aud"] == "catalog-api"


def test_an_expired_token_is_refused():
    token = tokens.issue("u-1", "catalog-api", ["read"], KEY, NOW - 2000, ttl_seconds=900)
    try:
        tokens.verify(token, KEY, "catalog-api", NOW)
    except tokens.Expired:
        return
    raise AssertionError("an expired token was accepted")
