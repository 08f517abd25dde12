"""The SDK's retry policy: which refusals are passing, and how long to wait before trying again.

Two refusals say that trying again later will work, and the client does so by itself:

- UNAVAILABLE with reason `SERVER_HANDING_OVER`: the server is stopping and leaves its sessions
  to the next server on its store. Nothing was applied; the client tries again (a unary call
  with the same request, an agent's call with the same `call_id` after resuming its seat) until
  the next server answers, for at most `handover_timeout` seconds.
- Any refusal carrying `google.rpc.RetryInfo` (RESOURCE_EXHAUSTED `SERVER_AT_CAPACITY`): the
  server said how long to wait; the client waits that long (at most `max_retry_delay`) and
  tries again, `max_attempts` times in all.
- A call about a fleet's session (`metasre serve --workers N`, or on Ray) that finds its shard
  gone (UNAVAILABLE with no reason, or its stream lost without one): the shard's supervisor
  starts the slot again and the new process rebuilds the slot's sessions from the store, so the
  client waits for it as for a handover, for at most `handover_timeout` seconds. A lone
  server's session is not waited for: nothing restarts a lone server by itself.

Everything else is raised at once. A repeated call is safe: the server applies a seat's
`call_id` at most once and answers a repeat with the original result.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from .errors import ClientError, ConnectionLostError

T = TypeVar("T")

HANDING_OVER = "SERVER_HANDING_OVER"
"""The ErrorInfo reason of a server that hands its sessions over to the next one."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How the client retries refusals that say they will pass (`never()` turns it off)."""

    max_attempts: int = 5
    """Tries in all (the first included) of a call refused with RetryInfo."""
    max_retry_delay: float = 30.0
    """The longest the client waits on a server's RetryInfo delay, in seconds."""
    handover_timeout: float = 30.0
    """How long the client keeps trying a call during a handover (or while a fleet's shard
    is started again), in seconds, from the first refusal; time for the next server to start
    and rebuild the sessions."""
    initial_backoff: float = 0.05
    """The first wait between tries during a handover, in seconds; doubled each try."""
    max_backoff: float = 1.0
    """The longest wait between tries during a handover, in seconds."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        for name in ("max_retry_delay", "handover_timeout", "initial_backoff", "max_backoff"):
            value = getattr(self, name)
            if not value >= 0:  # NaN too
                raise ValueError(f"{name} must be a number of seconds >= 0, got {value}")

    @classmethod
    def never(cls) -> RetryPolicy:
        """A policy that raises every refusal at once."""
        return cls(max_attempts=1, handover_timeout=0.0)

    def delay(
        self, error: ClientError, attempt: int, elapsed: float, *, in_fleet: bool = False
    ) -> float | None:
        """Seconds to wait before trying again, or None to raise `error`.

        Args:
            error: Why the last try failed.
            attempt: How many tries were made so far (1 after the first).
            elapsed: Seconds since the first refusal of this call.
            in_fleet: The call is about a session of a fleet, whose shard comes back when it
                dies.
        """
        if passes_like_a_handover(error, in_fleet=in_fleet):
            if elapsed >= self.handover_timeout:
                return None
            backoff = min(self.max_backoff, self.initial_backoff * 2.0 ** (attempt - 1))
            # Jitter spreads the agents of a handed-over server over the next one's start.
            wait = backoff * (0.5 + random.random() / 2)
            return min(wait, self.handover_timeout - elapsed)
        if error.retry_delay is not None and attempt < self.max_attempts:
            return min(error.retry_delay, self.max_retry_delay)
        return None

    async def run(
        self, attempt: Callable[[float | None], Awaitable[T]], *, in_fleet: bool = False
    ) -> T:
        """Make a call's tries until one succeeds or this policy gives up; returns its result.

        `attempt(ready_within)` makes one try. `ready_within` is None on the first try and after
        a RetryInfo refusal; after a handover refusal it is the seconds left to wait for a
        server (the next one may not listen yet), and the try waits for one that long (gRPC's
        `wait_for_ready` with that timeout) instead of failing at once. `in_fleet`: the call is
        about a fleet's session, and a shard found gone is waited for as a handover is.

        Raises:
            ClientError: the last refusal, when it is not retried or the policy gave up; a try
                that found no server in time raises the handover refusal that started it.
        """
        loop = asyncio.get_running_loop()
        first_refusal: float | None = None
        handover: ClientError | None = None
        ready_within: float | None = None
        tries = 0
        while True:
            tries += 1
            try:
                return await attempt(ready_within)
            except (ClientError, TimeoutError) as exc:
                timed_out = isinstance(exc, TimeoutError) or (
                    exc.code == "DEADLINE_EXCEEDED" and not exc.reason
                )
                if handover is not None and timed_out:
                    raise handover from exc
                if not isinstance(exc, ClientError):
                    raise
                now = loop.time()
                first_refusal = now if first_refusal is None else first_refusal
                wait = self.delay(exc, tries, now - first_refusal, in_fleet=in_fleet)
                if wait is None:
                    raise
                if passes_like_a_handover(exc, in_fleet=in_fleet):
                    handover = exc
            await asyncio.sleep(wait)
            if handover is not None:
                ready_within = max(0.001, self.handover_timeout - (loop.time() - first_refusal))


def passes_like_a_handover(error: ClientError, *, in_fleet: bool) -> bool:
    """Whether `error` says a server will take the call soon (handover, or a shard's restart).

    The next server of a handover, or (`in_fleet`) the restarted shard of a fleet's session.
    A shard found gone is UNAVAILABLE with no reason of the server's (a unary call the directory
    could not forward, or a channel to the shard itself); a stream that broke as its shard was
    killed may also end INTERNAL (its connection reset mid-message).
    """
    if error.reason == HANDING_OVER:
        return error.code == "UNAVAILABLE"
    if not in_fleet or error.reason:
        return False
    return error.code == "UNAVAILABLE" or (
        error.code == "INTERNAL" and isinstance(error, ConnectionLostError)
    )


__all__ = ["HANDING_OVER", "RetryPolicy", "passes_like_a_handover"]
