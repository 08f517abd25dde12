"""WatchService: a session's log as a stream, replayed from any tick and then live."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc

from metasre.v1 import watch_pb2

from ..config import ServerConfig
from ..core.errors import ServerHandingOverError, StoreError, StoreUnavailableError
from ..registry import Registry
from . import convert
from .status import abort

Context = grpc.aio.ServicerContext[Any, Any]


class WatchServicer:
    """Spectators, dashboards and trainers follow sessions here (admin token if configured)."""

    def __init__(self, registry: Registry, config: ServerConfig) -> None:
        self._registry = registry
        self._config = config

    async def WatchSession(
        self, request: watch_pb2.WatchSessionRequest, context: Context
    ) -> AsyncIterator[watch_pb2.WatchSessionResponse]:
        """Every event from (episode, from_tick) on, until the session closes."""
        try:
            session, _ = self._registry.owned(
                request.session_id,
                tuple(context.invocation_metadata() or ()),
                self._config.admin_token,
            )
            episode = convert.check_episode(request.episode, session.episode_no)
        except Exception as exc:
            await abort(context, exc)
        try:
            start = await session.position(episode, request.from_tick)
        except StoreError as exc:
            await abort(context, StoreUnavailableError(f"the store cannot be read ({exc})"))
        async for entry in session.follow(start):
            yield watch_pb2.WatchSessionResponse(event=convert.event_pb(entry))
        if session.failure is not None:
            await abort(context, StoreUnavailableError(session.failure))
        if session.handed_over is not None:
            await abort(context, ServerHandingOverError(session.handed_over))
