"""Turning exceptions into gRPC statuses at the edge of every call, bugs logged, never leaked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc
import structlog
from google.rpc.status_pb2 import Status

from metasre.service.errors import ServiceError, status_code, to_status

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


RETRY_PUSHBACK_KEY = "grpc-retry-pushback-ms"
"""The trailer in which gRPC's own retry policy reads how long the server asks it to wait."""


def trailers(exc: BaseException, status: Status) -> tuple[tuple[str, str | bytes], ...]:
    """The trailing metadata of a failed call: the status details, and more for a retry.

    A refusal with `ServiceError.retry_after` also carries the wait and the error's metadata
    (the limit it hit, say) as plain trailers, for clients and proxies that do not decode the
    details.
    """
    out: list[tuple[str, str | bytes]] = [(DETAILS_KEY, status.SerializeToString())]
    if isinstance(exc, ServiceError) and exc.retry_after is not None:
        out.append((RETRY_PUSHBACK_KEY, str(round(exc.retry_after * 1000))))
        out += [(f"metasre-{k.replace('_', '-')}", v) for k, v in sorted(exc.metadata.items())]
    return tuple(out)


async def abort(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException) -> NoReturn:
    """End the call with the status of `exc`, details in the trailers."""
    status = status_of(exc)
    metadata = trailers(exc, status)
    await context.abort(status_code(status), status.message, trailing_metadata=metadata)


async def guarded(context: grpc.aio.ServicerContext[Any, Any], op: Callable[[], Awaitable[T]]) -> T:
    """Run a unary call's body; any exception ends the call with its mapped status."""
    try:
        return await op()
    except grpc.aio.AbortError:
        raise
    except Exception as exc:
        await abort(context, exc)
