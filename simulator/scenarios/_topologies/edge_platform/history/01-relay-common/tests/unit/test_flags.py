from relay_common import flags


def test_buckets_are_sticky_and_in_range():
    b = flags.bucket("search.semantic_rerank", "u-42")
    assert 0 <= b < 100 and b == flags.bucket("search.semantic_rerank", "u-42")


def test_zero_percent_is_off_for_everyone():
    users = [f"u-{i}" for i in range(200)]
    assert flags.share_enabled("checkout.one_click", 0, users) == 0


def test_full_rollout_is_on_for_everyone():
    users = [f"u-{i}" for i in range(200)]
    assert flags.share_enabled("checkout.one_click", 100, users) == 200
