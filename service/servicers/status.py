"""Turning exceptions into gRPC statuses at the edge of every call, bugs logged, never leaked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc
import structlog
from google.rpc.status_pb2 import Status

from metasre.service.errors import status_code, to_status

T = TypeVar("T")

log = structlog.get_logger("metasre.service")

DETAILS_KEY = "grpc-status-details-bin"
"""The trailing metadata key gRPC clients read rich error details from."""


def status_of(exc: BaseException, **context: Any) -> Status:
    """The status for `exc`; a bug is logged with its incident id and traceback."""
    status, incident = to_status(exc)
    if incident is not None:
        log.error("internal_error", incident=incident, exc_info=exc, **context)
    return status


async def abort(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException) -> NoReturn:
    """End the call with the status of `exc`, details in the trailers."""
    status = status_of(exc)
    await context.abort(
        status_code(status),
        status.message,
        trailing_metadata=((DETAILS_KEY, status.SerializeToString()),),
    )


async def guarded(context: grpc.aio.ServicerContext[Any, Any], op: Callable[[], Awaitable[T]]) -> T:
    """Run a unary call's body; any exception ends the call with its mapped status."""
    try:
        return await op()
    except grpc.aio.AbortError:
        raise
    except Exception as exc:
        await abort(context, exc)
