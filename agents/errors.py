"""Errors a client raises: each carries the server's status code, reason and field violations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import grpc
from google.rpc import code_pb2, error_details_pb2, status_pb2


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
    ) -> None:
        super().__init__(f"{code} {reason}: {message}" if reason else f"{code}: {message}")
        self.message = message
        self.code = code
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.violations = violations
        """(field, description) pairs for invalid arguments."""
        self.call_id = call_id


class EpisodeOverError(ClientError):
    """Raised when a call arrives after the episode ended."""


class ConnectionLostError(ClientError):
    """Raised when the agent's stream ended before the answer arrived."""


def from_status(status: status_pb2.Status, call_id: str = "") -> ClientError:
    """The client error for an in-band `google.rpc.Status`."""
    reason = ""
    metadata: dict[str, str] = {}
    violations: list[tuple[str, str]] = []
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        bad = error_details_pb2.BadRequest()
        if detail.Unpack(info):
            reason, metadata = info.reason, dict(info.metadata)
        elif detail.Unpack(bad):
            violations += [(v.field, v.description) for v in bad.field_violations]
    code = code_pb2.Code.Name(status.code) if status.code in code_pb2.Code.values() else "UNKNOWN"
    cls = EpisodeOverError if reason == "EPISODE_OVER" else ClientError
    return cls(
        status.message,
        code=code,
        reason=reason,
        metadata=metadata,
        violations=tuple(violations),
        call_id=call_id,
    )


def from_rpc_error(exc: grpc.aio.AioRpcError) -> ClientError:
    """The client error for a failed unary call (rich details from the trailers when present)."""
    trailers = cast(Sequence[tuple[str, str | bytes]], exc.trailing_metadata() or ())
    for key, value in trailers:
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            return from_status(status)
    return ClientError(exc.details() or "", code=exc.code().name)
