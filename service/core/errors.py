"""The service's errors: each says, for the client, what was wrong and what to do.

Plain exceptions, no gRPC: `metasre.service.wire.status` maps each class to its status
code and ErrorInfo reason (one table), at the wire's edge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


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


class SessionReleasedError(SessionNotFoundError):
    """Raised when a session id names a session released after its episode ended and its seats left.

    See `Limits.ended_session_seconds`.
    """


class SessionOnOtherShardError(SessionNotFoundError):
    """Raised when a session id names a session another shard of the fleet holds.

    Its metadata names the holder: `owner_shard` (the slot) and `owner_endpoint` (host:port).
    """


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


class OutsideViewError(ServiceError):
    """Raised when a seat's call aims at something its view hides (`metasre.simulator.views`)."""


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


class OwnerAtQuotaError(ServiceError):
    """Raised when a session's owner already holds as many sessions as one owner may."""


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
    `metasre.service.core.session.Session.flush`.
    """


class MessageTooLargeError(ServiceError):
    """Raised when a request is larger than the server's message limit."""


class RequestIdReusedError(ServiceError):
    """Raised when a CreateSession request_id is sent again with different parameters."""


class CallIdReusedError(ServiceError):
    """Raised when a seat's call_id is sent again with another tool or other arguments."""


class StoreError(Exception):
    """Raised by the trajectory store when it cannot write (disk full, read-only, closed).

    The sessions it records fail closed (`StoreUnavailableError` to their clients).
    """


class StoreLostError(StoreError):
    """Raised when the store's files were removed, replaced, truncated or overwritten under it.

    Args:
        message: What happened to which file.
        files_remain: Only a file's header was overwritten: the files are still the store's,
            so a server started on them may read them again (SQLite rewrites the header from
            its WAL), and the sessions they hold may come back.
        written: This write reached those files before the damage was seen.
    """

    def __init__(self, message: str, *, files_remain: bool = False, written: bool = False):
        super().__init__(message)
        self.files_remain = files_remain
        self.written = written and files_remain


class InvalidRequestError(ServiceError):
    """Raised when a request's own fields are malformed (an empty id, a bad enum, ...)."""


__all__ = [
    "AlreadyJoinedError",
    "CallAbortedError",
    "CallIdReusedError",
    "EpisodeEndedError",
    "EpisodeResetError",
    "InvalidRequestError",
    "MessageTooLargeError",
    "NotJoinedError",
    "NotSessionOwnerError",
    "NotYourTurnError",
    "OutsideViewError",
    "OwnerAtQuotaError",
    "RequestIdReusedError",
    "SeatIdleError",
    "SeatTakenError",
    "ServerAtCapacityError",
    "ServerDrainingError",
    "ServerHandingOverError",
    "ServiceError",
    "SessionClosedError",
    "SessionFullError",
    "SessionIdleError",
    "SessionNotFoundError",
    "SessionOnOtherShardError",
    "SessionReleasedError",
    "SlowReaderError",
    "StoreError",
    "StoreLostError",
    "StoreUnavailableError",
    "TokenInvalidError",
    "TokenMissingError",
    "ToolNotAllowedError",
]
