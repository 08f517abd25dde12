from relay_common import tls

DAY = 86400
NOW = 1_760_000_000
CA = tls.Certificate("relay-internal-ca", "relay-internal-ca", NOW - 400 * DAY, NOW + 3000 * DAY, (), True)


def _leaf(not_after, hostnames=("catalog-api.relay.internal",)):
    return tls.Certificate("catalog-api", "relay-internal-ca", NOW - 80 * DAY, not_after, hostnames)


def test_a_valid_leaf_chains_to_the_internal_ca():
    assert tls.validate(_leaf(NOW + 10 * DAY), [CA], "catalog-api.relay.internal", NOW) == "relay-internal-ca"


def test_an_expired_leaf_is_refused_with_the_x509_words():
    try:
        tls.validate(_leaf(NOW - 1), [CA], "catalog-api.relay.internal", NOW)
    except tls.X509Error as exc:
        assert "has expired" in str(exc), exc
        return
    raise AssertionError("an expired certificate was accepted")


def test_a_wrong_hostname_is_refused():
    try:
        tls.validate(_leaf(NOW + DAY), [CA], "search-api.relay.internal", NOW)
    except tls.X509Error as exc:
        assert "not search-api.relay.internal" in str(exc), exc
        return
    raise AssertionError("a certificate for another host was accepted")
