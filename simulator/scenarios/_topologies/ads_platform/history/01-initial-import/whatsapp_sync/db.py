"""Async access to postgres through a bounded connection pool."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Protocol

from whatsapp_sync import config


class PoolExhausted(RuntimeError):
    """Raised when no pooled connection frees up before the acquire timeout."""


class Connection(Protocol):
    """The part of the driver's connection the repository uses."""

    async def fetch_one(self, query: str, *args: Any) -> dict[str, Any] | None: ...

    async def execute(self, query: str, *args: Any) -> int: ...


class Pool(Protocol):
    """A pool of connections: what is acquired must be released exactly once."""

    async def acquire(self) -> Connection: ...

    async def release(self, conn: Connection) -> None: ...


class ConnectionPool:
    """A fixed-size pool over the driver's connect() coroutine.

    Connections are opened lazily up to `size`; after that, acquire() waits for a release
    and raises PoolExhausted when none comes within `acquire_timeout` seconds.
    """

    def __init__(
        self,
        connect: Callable[[], Awaitable[Connection]],
        size: int = config.POOL_SIZE,
        acquire_timeout: float = config.ACQUIRE_TIMEOUT_SECONDS,
    ) -> None:
        self._connect = connect
        self._size = size
        self._timeout = acquire_timeout
        self._idle: asyncio.Queue[Connection] = asyncio.Queue()
        self._opened = 0
        self.in_use = 0

    async def acquire(self) -> Connection:
        if self._idle.empty() and self._opened < self._size:
            self._opened += 1
            conn = await self._connect()
        else:
            try:
                conn = await asyncio.wait_for(self._idle.get(), self._timeout)
            except asyncio.TimeoutError:
                raise PoolExhausted(
                    f"timeout acquiring connection: {self.in_use}/{self._size} in use"
                    f" after {self._timeout}s"
                ) from None
        self.in_use += 1
        return conn

    async def release(self, conn: Connection) -> None:
        self.in_use -= 1
        self._idle.put_nowait(conn)
