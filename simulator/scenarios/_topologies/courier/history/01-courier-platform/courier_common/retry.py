"""Client-side retries for service-to-service calls: capped attempts, exponential backoff, jitter.

Every client builds its policy from its live config: `<callee>.retries`,
`<callee>.retry_backoff_ms` and `<callee>.retry_jitter` (RUNBOOK.md, "Retries").
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

RETRYABLE = (TimeoutError, ConnectionError)
"""Failures worth another attempt; anything else is the callee's answer."""


@dataclass(frozen=True)
class RetryPolicy:
    """How a client retries one callee."""

    retries: int = 3
    """Attempts after the first one."""
    backoff_ms: int = 200
    """Delay before the first retry; doubled for each further one."""
    jitter: bool = False
    """Draw each delay uniformly from [0, backoff] so replicas do not retry in lockstep."""
    cap_ms: int = 5000
    """Longest delay between two attempts."""

    @classmethod
    def from_config(cls, config: dict, callee: str) -> "RetryPolicy":
        """The policy for `callee` from a service's live config."""
        return cls(
            retries=int(config.get(f"{callee}.retries", cls.retries)),
            backoff_ms=int(config.get(f"{callee}.retry_backoff_ms", cls.backoff_ms)),
            jitter=bool(config.get(f"{callee}.retry_jitter", cls.jitter)),
        )

    @property
    def attempts(self) -> int:
        """Calls made for one request when every attempt fails."""
        return 1 + max(0, self.retries)

    def delay_ms(self, retry: int, rng: random.Random) -> float:
        """Delay before retry number `retry` (1 for the first retry)."""
        base = min(self.cap_ms, self.backoff_ms * 2 ** (retry - 1))
        return rng.uniform(0, base) if self.jitter else float(base)


def amplification(policy: RetryPolicy, failure_rate: float) -> float:
    """Expected calls per request when each call fails on its own with `failure_rate`."""
    p = min(max(failure_rate, 0.0), 1.0)
    return sum(p**k for k in range(policy.attempts))


def call_with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    sleep: Callable[[float], None],
    rng: random.Random,
) -> T:
    """Call `call` until it succeeds or the policy's attempts are spent.

    Only RETRYABLE failures are retried; the last one is raised.
    """
    for retry in range(policy.attempts):
        if retry:
            sleep(policy.delay_ms(retry, rng) / 1000)
        try:
            return call()
        except RETRYABLE:
            if retry == policy.attempts - 1:
                raise
    raise AssertionError("unreachable")
