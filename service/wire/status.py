"""Turning exceptions into gRPC statuses at the edge of every call, bugs logged, never leaked.

Each refusal becomes a `google.rpc.Status` with an `ErrorInfo` (reason, domain `metasre.dev`)
and, for bad requests, a `BadRequest` whose field violations name the valid choices; a refusal
that passes carries a `RetryInfo`. `ERROR_TABLE` is the one map of error class to status.
Anything not in it is a bug: INTERNAL, with an incident id and nothing of the internals.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol, TypeVar

import grpc
import structlog
from google.rpc.error_details_pb2 import BadRequest, ErrorInfo, RetryInfo
from google.rpc.status_pb2 import Status

from ...simulator import EpisodeOverError, InvalidToolCallError, UnknownToolError
from ...simulator.scenarios.errors import UnknownScenarioError
from ..core.errors import (
    AlreadyJoinedError,
    CallAbortedError,
    CallIdReusedError,
    EpisodeEndedError,
    EpisodeResetError,
    InvalidRequestError,
    MessageTooLargeError,
    NotJoinedError,
    NotSessionOwnerError,
    NotYourTurnError,
    OutsideViewError,
    OwnerAtQuotaError,
    RequestIdReusedError,
    SeatIdleError,
    SeatTakenError,
    ServerAtCapacityError,
    ServerDrainingError,
    ServerHandingOverError,
    ServiceError,
    SessionClosedError,
    SessionFullError,
    SessionIdleError,
    SessionNotFoundError,
    SessionOnOtherShardError,
    SessionReleasedError,
    SlowReaderError,
    StoreUnavailableError,
    TokenInvalidError,
    TokenMissingError,
    ToolNotAllowedError,
)

DOMAIN = "metasre.dev"
"""The ErrorInfo domain of every error this service raises."""

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


class Guarded(Protocol):
    """What `unary` wraps: a servicer method that may check the admin token first."""

    def _admin(self, context: grpc.aio.ServicerContext[Any, Any]) -> None: ...


S = TypeVar("S", bound=Guarded)
Req = TypeVar("Req")


def unary(
    *, admin: bool = False
) -> Callable[
    [Callable[[S, Req, grpc.aio.ServicerContext[Any, Any]], Awaitable[T]]],
    Callable[[S, Req, grpc.aio.ServicerContext[Any, Any]], Awaitable[T]],
]:
    """A unary servicer method whose exceptions end the call with their mapped status.

    With `admin`, the call must carry the server's admin token (when it has one) first.
    """

    def wrap(
        method: Callable[[S, Req, grpc.aio.ServicerContext[Any, Any]], Awaitable[T]],
    ) -> Callable[[S, Req, grpc.aio.ServicerContext[Any, Any]], Awaitable[T]]:
        @functools.wraps(method)
        async def call(self: S, request: Req, context: grpc.aio.ServicerContext[Any, Any]) -> T:
            async def op() -> T:
                if admin:
                    self._admin(context)
                return await method(self, request, context)

            return await guarded(context, op)

        return call

    return wrap


# -- the table ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatusRow:
    """One row of the table: the status code and ErrorInfo reason of an error class."""

    code: grpc.StatusCode
    reason: str


ERROR_TABLE: Mapping[type[Exception], StatusRow] = {
    SessionNotFoundError: StatusRow(grpc.StatusCode.NOT_FOUND, "SESSION_NOT_FOUND"),
    SessionIdleError: StatusRow(grpc.StatusCode.NOT_FOUND, "SESSION_IDLE"),
    SessionReleasedError: StatusRow(grpc.StatusCode.NOT_FOUND, "SESSION_RELEASED"),
    SessionOnOtherShardError: StatusRow(grpc.StatusCode.NOT_FOUND, "SESSION_ON_OTHER_SHARD"),
    UnknownScenarioError: StatusRow(grpc.StatusCode.NOT_FOUND, "SCENARIO_NOT_FOUND"),
    TokenMissingError: StatusRow(grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING"),
    TokenInvalidError: StatusRow(grpc.StatusCode.PERMISSION_DENIED, "TOKEN_INVALID"),
    NotSessionOwnerError: StatusRow(grpc.StatusCode.PERMISSION_DENIED, "NOT_SESSION_OWNER"),
    UnknownToolError: StatusRow(grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_TOOL"),
    InvalidToolCallError: StatusRow(grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENTS"),
    InvalidRequestError: StatusRow(grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST"),
    MessageTooLargeError: StatusRow(grpc.StatusCode.RESOURCE_EXHAUSTED, "MESSAGE_TOO_LARGE"),
    NotYourTurnError: StatusRow(grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN"),
    ToolNotAllowedError: StatusRow(grpc.StatusCode.FAILED_PRECONDITION, "TOOL_NOT_ALLOWED"),
    OutsideViewError: StatusRow(grpc.StatusCode.FAILED_PRECONDITION, "OUTSIDE_VIEW"),
    NotJoinedError: StatusRow(grpc.StatusCode.FAILED_PRECONDITION, "NOT_JOINED"),
    AlreadyJoinedError: StatusRow(grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_JOINED"),
    SeatTakenError: StatusRow(grpc.StatusCode.FAILED_PRECONDITION, "SEAT_TAKEN"),
    EpisodeEndedError: StatusRow(grpc.StatusCode.FAILED_PRECONDITION, "EPISODE_OVER"),
    EpisodeOverError: StatusRow(grpc.StatusCode.FAILED_PRECONDITION, "EPISODE_OVER"),
    SessionClosedError: StatusRow(grpc.StatusCode.FAILED_PRECONDITION, "SESSION_CLOSED"),
    CallAbortedError: StatusRow(grpc.StatusCode.ABORTED, "SESSION_CLOSED"),
    EpisodeResetError: StatusRow(grpc.StatusCode.ABORTED, "EPISODE_RESET"),
    SessionFullError: StatusRow(grpc.StatusCode.RESOURCE_EXHAUSTED, "SESSION_FULL"),
    ServerAtCapacityError: StatusRow(grpc.StatusCode.RESOURCE_EXHAUSTED, "SERVER_AT_CAPACITY"),
    OwnerAtQuotaError: StatusRow(grpc.StatusCode.RESOURCE_EXHAUSTED, "OWNER_AT_QUOTA"),
    ServerDrainingError: StatusRow(grpc.StatusCode.UNAVAILABLE, "SERVER_DRAINING"),
    ServerHandingOverError: StatusRow(grpc.StatusCode.UNAVAILABLE, "SERVER_HANDING_OVER"),
    SeatIdleError: StatusRow(grpc.StatusCode.DEADLINE_EXCEEDED, "SEAT_IDLE"),
    SlowReaderError: StatusRow(grpc.StatusCode.RESOURCE_EXHAUSTED, "SLOW_READER"),
    StoreUnavailableError: StatusRow(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE"),
    RequestIdReusedError: StatusRow(grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED"),
    CallIdReusedError: StatusRow(grpc.StatusCode.ALREADY_EXISTS, "CALL_ID_REUSED"),
}
"""Error class to status; the first class in an exception's MRO that is here wins."""

_INTERNAL = StatusRow(grpc.StatusCode.INTERNAL, "INTERNAL")


def lookup(exc: BaseException) -> StatusRow | None:
    """The table row of `exc`, or None when it is not a known error (a bug)."""
    for cls in type(exc).__mro__:
        row = ERROR_TABLE.get(cls)
        if row is not None:
            return row
    return None


def to_status(exc: BaseException) -> tuple[Status, str | None]:
    """The `google.rpc.Status` for `exc`, and an incident id when it is a bug (else None).

    A bug's status says only "internal error" and the incident id; the caller logs the rest.
    """
    row = lookup(exc)
    incident = None
    if row is None:
        row = _INTERNAL
        incident = secrets.token_hex(6)
        message = f"internal error (incident {incident}); the server logged the details"
        violations: tuple[tuple[str, str], ...] = ()
        metadata: dict[str, str] = {"incident": incident}
    else:
        message = str(exc)
        violations, metadata = _details(exc)
    info = ErrorInfo(reason=row.reason, domain=DOMAIN, metadata=metadata)
    status = Status(code=_code_number(row.code), message=message)
    status.details.add().Pack(info)
    if violations:
        bad = BadRequest(
            field_violations=[
                BadRequest.FieldViolation(field=f, description=d) for f, d in violations
            ]
        )
        status.details.add().Pack(bad)
    retry_after = exc.retry_after if isinstance(exc, ServiceError) else None
    if retry_after is not None:
        retry = RetryInfo()
        retry.retry_delay.FromMilliseconds(round(retry_after * 1000))
        status.details.add().Pack(retry)
    return status, incident


def _details(exc: BaseException) -> tuple[tuple[tuple[str, str], ...], dict[str, str]]:
    if isinstance(exc, UnknownToolError):
        choices = ", ".join(exc.choices)
        return (
            (("tool", f"unknown tool {exc.tool[:64]!r}; valid choices: {choices}"),),
            {"tool": exc.tool[:64], "choices": choices},
        )
    if isinstance(exc, InvalidToolCallError):
        return (
            tuple((f"args.{f}" if f else "args", d) for f, d in exc.violations),
            {"tool": exc.tool[:64]},
        )
    if isinstance(exc, ServiceError):
        return exc.violations, exc.metadata
    return (), {}


def _code_number(code: grpc.StatusCode) -> int:
    value = code.value[0]
    assert isinstance(value, int)
    return value


def status_code(status: Status) -> grpc.StatusCode:
    """The grpc.StatusCode of a status message."""
    return next((c for c in grpc.StatusCode if c.value[0] == status.code), grpc.StatusCode.UNKNOWN)
