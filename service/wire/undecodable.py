"""Requests that are not protobuf messages of the method's type get INVALID_ARGUMENT.

Left to itself, grpcio answers bytes that do not parse with UNKNOWN and a message naming its
internal exception; on a stream, the servicer's read of the next message fails and the stream
ends. This interceptor catches the parse error in the deserializer instead: a unary or
server-streaming call ends with INVALID_ARGUMENT / INVALID_REQUEST, and on a Connect stream the
message is refused in-band by the agent servicer (the stream goes on).

It also enforces the server's message limit (`Limits.max_message_bytes`) itself, so a request
over it is refused like any other bad request, with RESOURCE_EXHAUSTED / MESSAGE_TOO_LARGE
naming the limit, and a Connect stream goes on. gRPC's own limit is set
`RECEIVE_SLACK` times higher: only a message beyond that is cut off by gRPC, which ends the
call (a stream's seat is then taken back with its join or resume token).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import grpc

from ..core.errors import InvalidRequestError, MessageTooLargeError, ServiceError
from .call_id_scan import call_id_in
from .status import abort

RECEIVE_SLACK = 4
"""gRPC's receive limit is this many times the server's: between the two, the server refuses a
message with its own error (and a stream stays open); beyond, gRPC ends the call."""


class Refused:
    """Stands in for a request that is not accepted: it did not parse, or it is too large.

    A Connect stream receives it as a request and answers it in-band with `error`, naming
    `call_id`: the id read from the refused bytes, so that the caller's call gets its answer.
    """

    def __init__(self, error: ServiceError, call_id: str = "") -> None:
        self.error = error
        self.call_id = call_id


def _refusal(method: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"the request is not a valid protobuf message for {method[:200]}; send the message the "
        "method's .proto declares",
        (("request", "a serialized request message"),),
    )


def too_large(size: int, limit: int) -> MessageTooLargeError:
    """The refusal of a `size`-byte request on a server whose limit is `limit` bytes."""
    return MessageTooLargeError(
        f"the request is {size} bytes; this server accepts messages of at most {limit} bytes "
        "(GetServerInfo limits.max_message_bytes): send less (smaller arguments, a narrower "
        "read)",
        (("request", f"at most {limit} bytes"),),
        {"max_message_bytes": str(limit), "size": str(size)},
    )


if TYPE_CHECKING:  # generic in the stubs only
    Handler = grpc.RpcMethodHandler[Any, Any]
    _Interceptor = grpc.aio.ServerInterceptor[Any, Any]
else:
    Handler = grpc.RpcMethodHandler
    _Interceptor = grpc.aio.ServerInterceptor


MAX_CACHED_METHODS = 256
"""Wrapped handlers kept; a server registers a few dozen methods (unknown ones are not kept)."""


class RejectUndecodable(_Interceptor):
    """See the module docstring."""

    def __init__(self, max_message_bytes: int) -> None:
        self._limit = max_message_bytes
        # Every call of a method gets the same handler from the server, so its safe version is
        # built once (closures, a new handler tuple and, for streams, an empty message) and
        # reused: the wrapping cost a few tens of microseconds per call, on every call.
        self._wrapped: dict[str, tuple[Handler, Handler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler]],
        details: grpc.HandlerCallDetails,
    ) -> Handler:
        """The handler of the call, its deserializer made safe."""
        handler = await continuation(details)
        if handler is None or handler.request_deserializer is None:
            return handler
        method: str = details.method
        found = self._wrapped.get(method)
        if found is not None and found[0] is handler:
            return found[1]
        wrapped = _made_safe(handler, method, self._limit)
        if len(self._wrapped) >= MAX_CACHED_METHODS:
            self._wrapped.clear()
        self._wrapped[method] = (handler, wrapped)
        return wrapped


def _made_safe(handler: Handler, method: str, limit: int) -> Handler:
    """`handler` with a deserializer that turns bad and oversized requests into refusals."""
    decode = handler.request_deserializer
    assert decode is not None

    def safe(data: bytes) -> Any:
        if len(data) > limit:
            return Refused(too_large(len(data), limit))
        try:
            return decode(data)
        except Exception:  # any parse error of any message type
            return Refused(_refusal(method))

    if handler.stream_stream is not None:
        # Connect, the one stream of requests: a refusal names the call it refuses.
        def safe_connect(data: bytes) -> Any:
            request = safe(data)
            if isinstance(request, Refused):
                request.call_id = call_id_in(data)
            return request

        return grpc.stream_stream_rpc_method_handler(
            handler.stream_stream, safe_connect, handler.response_serializer
        )

    if handler.unary_unary is not None:
        unary = handler.unary_unary

        async def unary_unary(request: Any, context: Any) -> Any:
            if isinstance(request, Refused):
                await abort(context, request.error)
            return await unary(request, context)

        return grpc.unary_unary_rpc_method_handler(unary_unary, safe, handler.response_serializer)
    if handler.unary_stream is not None:
        streaming: Any = handler.unary_stream
        if not inspect.isasyncgenfunction(streaming):
            # a coroutine that writes with context.write (grpc's own health Watch does)
            async def unary_stream_writer(request: Any, context: Any) -> None:
                if isinstance(request, Refused):
                    await abort(context, request.error)
                await streaming(request, context)

            return grpc.unary_stream_rpc_method_handler(
                unary_stream_writer, safe, handler.response_serializer
            )

        async def unary_stream(request: Any, context: Any) -> AsyncIterator[Any]:
            if isinstance(request, Refused):
                await abort(context, request.error)
            async for response in streaming(request, context):
                yield response

        return grpc.unary_stream_rpc_method_handler(unary_stream, safe, handler.response_serializer)
    return handler
