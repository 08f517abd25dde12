from relay_common import signing

KEY = b"whsec-test"
NOW = 1_760_000_000


def test_a_fresh_signature_checks():
    header = signing.sign(b"{}", KEY, NOW)
    assert signing.check(header, b"{}", KEY, NOW + 10) == NOW


def test_a_stale_signature_is_refused():
    header = signing.sign(b"{}", KEY, NOW - 301)
    try:
        signing.check(header, b"{}", KEY, NOW)
    except signing.StaleSignature:
        return
    raise AssertionError("a 301 s old signature was accepted")


def test_a_presigned_url_expires():
    url = signing.presign("/media/v/abc.m3u8", KEY, NOW, ttl_seconds=600)
    assert signing.check_presigned(url, KEY, NOW + 599) == "/media/v/abc.m3u8"
    try:
        signing.check_presigned(url, KEY, NOW + 600)
    except signing.StaleSignature:
        return
    raise AssertionError("an expired presigned URL was accepted")
