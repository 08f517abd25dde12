"""The shared retry policy: capped attempts, exponential backoff, jitter."""

import random

from courier_common.retry import RetryPolicy, amplification, call_with_retries


def test_attempts_are_one_plus_retries():
    assert RetryPolicy(retries=2).attempts == 3
    assert RetryPolicy(retries=0).attempts == 1


def test_backoff_doubles_up_to_the_cap():
    policy = RetryPolicy(backoff_ms=200, jitter=False, cap_ms=1000)
    rng = random.Random(1)
    assert [policy.delay_ms(k, rng) for k in (1, 2, 3, 4)] == [200.0, 400.0, 800.0, 1000.0]


def test_jitter_stays_within_the_backoff():
    policy = RetryPolicy(backoff_ms=200, jitter=True)
    rng = random.Random(7)
    delays = [policy.delay_ms(1, rng) for _ in range(200)]
    assert all(0 <= d <= 200 for d in delays)
    assert len({round(d) for d in delays}) > 50, "jittered delays should spread out"


def test_amplification_grows_with_retries():
    assert amplification(RetryPolicy(retries=2), 0.0) == 1.0
    assert round(amplification(RetryPolicy(retries=2), 0.5), 3) == 1.75
    assert amplification(RetryPolicy(retries=10), 1.0) == 11.0


def test_call_with_retries_gives_up_after_the_last_attempt():
    calls = []

    def flaky():
        calls.append(1)
        raise TimeoutError("callee timed out")

    slept = []
    try:
        policy = RetryPolicy(retries=2, jitter=False)
        call_with_retries(flaky, policy, slept.append, random.Random(0))
    except TimeoutError:
        pass
    else:
        raise AssertionError("the last failure should be raised")
    assert len(calls) == 3 and slept == [0.2, 0.4]


def test_policy_reads_the_live_config():
    cfg = {
        "geo-service.retries": 1,
        "geo-service.retry_backoff_ms": 150,
        "geo-service.retry_jitter": False,
    }
    assert RetryPolicy.from_config(cfg, "geo-service") == RetryPolicy(1, 150, False)
    assert RetryPolicy.from_config({}, "geo-service") == RetryPolicy()
