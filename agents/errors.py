"""Errors a client raises: each carries the server's status code, reason and field violations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import grpc
    from google.rpc import status_pb2


class ClientError(Exception):
    """Raised when the server refuses a request; `reason` is its ErrorInfo reason."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "UNKNOWN",
        reason: str = "",
        metadata: Mapping[str, str] | None = None,
        violations: tuple[tuple[str, str], ...] = (),
        call_id: str = "",
        retry_delay: float | None = None,
    ) -> None:
        super().__init__(f"{code} {reason}: {message}" if reason else f"{code}: {message}")
        self.message = message
        self.code = code
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.violations = violations
        """(field, description) pairs for invalid arguments."""
        self.call_id = call_id
        self.retry_delay = retry_delay
        """Seconds the server asked the client to wait before trying again (its RetryInfo), if
        it did; see `metasre.agents.retry.RetryPolicy`."""


class EpisodeOverError(ClientError):
    """Raised when a call arrives after the episode ended."""


class ConnectionLostError(ClientError):
    """Raised when the agent's stream ended before the answer arrived.

    The call may or may not have been applied: resume the seat and send it again with the same
    `call_id` (the server applies it at most once). `code` and `reason` say why the stream
    ended: the server's status when it gave one (SERVER_HANDING_OVER, SEAT_IDLE, ...), else
    the transport's (UNAVAILABLE or INTERNAL when the server vanished, CANCELLED when the
    client hung up).
    """


def from_status(status: status_pb2.Status, call_id: str = "", *, lost: bool = False) -> ClientError:
    """The client error for a `google.rpc.Status`; `lost` when it ended the agent's stream."""
    # Imported here: the errors themselves are pure, and a policy that catches them (the
    # expert) must not load protobuf's well-known types with them.
    from google.rpc import code_pb2, error_details_pb2

    reason = ""
    metadata: dict[str, str] = {}
    violations: list[tuple[str, str]] = []
    retry_delay = None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        bad = error_details_pb2.BadRequest()
        retry = error_details_pb2.RetryInfo()
        if detail.Unpack(info):
            reason, metadata = info.reason, dict(info.metadata)
        elif detail.Unpack(bad):
            violations += [(v.field, v.description) for v in bad.field_violations]
        elif detail.Unpack(retry):
            retry_delay = max(0.0, retry.retry_delay.ToTimedelta().total_seconds())
    code = code_pb2.Code.Name(status.code) if status.code in code_pb2.Code.values() else "UNKNOWN"
    cls: type[ClientError] = ClientError
    if lost:
        cls = ConnectionLostError
    elif reason == "EPISODE_OVER":
        cls = EpisodeOverError
    return cls(
        status.message,
        code=code,
        reason=reason,
        metadata=metadata,
        violations=tuple(violations),
        call_id=call_id,
        retry_delay=retry_delay,
    )


def from_rpc_error(exc: grpc.aio.AioRpcError, *, lost: bool = False) -> ClientError:
    """The client error for a failed call (rich details from the trailers when present).

    `lost` when the call was an agent's stream: whatever ended it, the calls still waiting on
    it get a `ConnectionLostError`.
    """
    trailers = cast(Sequence[tuple[str, str | bytes]], exc.trailing_metadata() or ())
    for key, value in trailers:
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            from google.rpc import status_pb2

            status = status_pb2.Status.FromString(value)
            return from_status(status, lost=lost)
    cls = ConnectionLostError if lost else ClientError
    return cls(exc.details() or "", code=exc.code().name)


__all__ = [
    "ClientError",
    "ConnectionLostError",
    "EpisodeOverError",
    "from_rpc_error",
    "from_status",
]
