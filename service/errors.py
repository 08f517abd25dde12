"""The service's errors and the one table that maps every error to a gRPC status.

Each refusal becomes a `google.rpc.Status` with an `ErrorInfo` (reason, domain `metasre.dev`)
and, for bad requests, a `BadRequest` whose field violations name the valid choices. Anything
not in the table is a bug: INTERNAL, with an incident id and nothing of the internals.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import grpc
from google.rpc.error_details_pb2 import BadRequest, ErrorInfo, RetryInfo
from google.rpc.status_pb2 import Status

from metasre.simulator import EpisodeOverError, InvalidToolCallError, UnknownToolError
from metasre.simulator.scenarios.errors import UnknownScenarioError

DOMAIN = "metasre.dev"
"""The ErrorInfo domain of every error this service raises."""


class ServiceError(Exception):
    """Base class of every error the service raises on purpose.

    Args:
        message: For the client: what was wrong and what to do.
        violations: (field, description) pairs for a BadRequest detail.
        metadata: Extra ErrorInfo metadata (for example the valid choices).
        retry_after: Seconds the client should wait before trying again, for a refusal that
            passes (a `google.rpc.RetryInfo` detail, and its metadata in the trailers too).
    """

    def __init__(
        self,
        message: str,
        violations: Sequence[tuple[str, str]] = (),
        metadata: Mapping[str, str] | None = None,
        *,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.violations = tuple(violations)
        self.metadata = dict(metadata or {})
        self.retry_after = retry_after


class SessionNotFoundError(ServiceError):
    """Raised when a session id names no open session."""


class SessionIdleError(SessionNotFoundError):
    """Raised when a session id names a session the server closed for being idle."""


class SessionClosedError(ServiceError):
    """Raised when a call reaches a session that was closed."""


class TokenMissingError(ServiceError):
    """Raised when a call that needs a token carries none."""


class TokenInvalidError(ServiceError):
    """Raised when a token does not belong to the session (or the server) it is presented to."""


class NotSessionOwnerError(ServiceError):
    """Raised when a control call on a session carries neither its owner token nor the admin's."""


class NotJoinedError(ServiceError):
    """Raised when a Connect stream calls a tool before it joined a seat."""


class AlreadyJoinedError(ServiceError):
    """Raised when a Connect stream that holds a seat tries to join again."""


class SeatTakenError(ServiceError):
    """Raised when a join names a seat another stream holds (resume takes a seat back)."""


class NotYourTurnError(ServiceError):
    """Raised when a call arrives out of turn under ROUND_ROBIN or twice in a SIMULTANEOUS round."""


class ToolNotAllowedError(ServiceError):
    """Raised when a seat's role may not use the tool it called."""


class EpisodeEndedError(ServiceError):
    """Raised when a call arrives after the episode ended."""


class CallAbortedError(ServiceError):
    """Raised to a call that was accepted but never applied because its session was closed.

    Nothing of it reached the world; the session is gone, so retrying it there cannot work.
    """


class EpisodeResetError(CallAbortedError):
    """Raised to a call that was accepted but never applied because its session was reset.

    Nothing of it reached the world: retrying its call_id plays it in the new episode.
    """


class SessionFullError(ServiceError):
    """Raised when a session is asked for more seats than a session may have."""


class ServerAtCapacityError(ServiceError):
    """Raised when the server already holds as many sessions as it may."""


class ServerDrainingError(ServiceError):
    """Raised when a call arrives while the server is shutting down."""


class ServerHandingOverError(ServiceError):
    """Raised to a session's streams when the server hands the session over.

    The server is stopping and leaves the session open in its store for the next server on it
    (`ServerConfig.handover`): resume the seat there.
    """


class SeatIdleError(ServiceError):
    """Raised when a Connect stream sends nothing for longer than the idle seat limit."""


class SlowReaderError(ServiceError):
    """Raised when a Connect stream reads its messages too slowly for too long (it is cut off)."""


class StoreUnavailableError(ServiceError):
    """Raised when the trajectory store cannot record a session's events (disk full, I/O error).

    The call it answers was not acknowledged, and its session is closed: see
    `metasre.service.session.Session.flush`.
    """


class MessageTooLargeError(ServiceError):
    """Raised when a request is larger than the server's message limit."""


class RequestIdReusedError(ServiceError):
    """Raised when a CreateSession request_id is sent again with different parameters."""


class InvalidRequestError(ServiceError):
    """Raised when a request's own fields are malformed (an empty id, a bad enum, ...)."""


@dataclass(frozen=True, slots=True)
class StatusRow:
    """One row of the table: the status code and ErrorInfo reason of an error class."""

    code: grpc.StatusCode
    reason: str


ERROR_TABLE: Mapping[type[Exception], StatusRow] = {
    SessionNotFoundError: StatusRow(grpc.StatusCode.NOT_FOUND, "SESSION_NOT_FOUND"),
    SessionIdleError: StatusRow(grpc.StatusCode.NOT_FOUND, "SESSION_IDLE"),
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
    ServerDrainingError: StatusRow(grpc.StatusCode.UNAVAILABLE, "SERVER_DRAINING"),
    ServerHandingOverError: StatusRow(grpc.StatusCode.UNAVAILABLE, "SERVER_HANDING_OVER"),
    SeatIdleError: StatusRow(grpc.StatusCode.DEADLINE_EXCEEDED, "SEAT_IDLE"),
    SlowReaderError: StatusRow(grpc.StatusCode.RESOURCE_EXHAUSTED, "SLOW_READER"),
    StoreUnavailableError: StatusRow(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE"),
    RequestIdReusedError: StatusRow(grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED"),
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


__all__ = [
    "DOMAIN",
    "ERROR_TABLE",
    "AlreadyJoinedError",
    "CallAbortedError",
    "EpisodeEndedError",
    "EpisodeResetError",
    "InvalidRequestError",
    "MessageTooLargeError",
    "NotJoinedError",
    "NotYourTurnError",
    "RequestIdReusedError",
    "SeatIdleError",
    "SeatTakenError",
    "ServerAtCapacityError",
    "ServerDrainingError",
    "ServiceError",
    "SessionClosedError",
    "SessionFullError",
    "SessionIdleError",
    "SessionNotFoundError",
    "SlowReaderError",
    "StatusRow",
    "StoreUnavailableError",
    "TokenInvalidError",
    "TokenMissingError",
    "ToolNotAllowedError",
    "lookup",
    "status_code",
    "to_status",
]
