"""The protocol's edges a client from the protos alone hit (issue 28): races, refusals, stores.

Each test goes through a real server on 127.0.0.1 with real grpc.aio channels.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import grpc

from metasre.service import ServerConfig, build_server
from metasre.v1 import common_pb2, control_pb2, control_pb2_grpc

from .conftest import PAY, TIMEOUT, owner_channel


def create_request(owner: str, request_id: str) -> control_pb2.CreateSessionRequest:
    return control_pb2.CreateSessionRequest(
        scenario_id=PAY,
        seed=1,
        seats=[common_pb2.SeatConfig(agent_id="a"), common_pb2.SeatConfig(agent_id="b")],
        owner_token=owner,
        request_id=request_id,
    )


async def test_concurrent_retries_of_one_request_id_on_a_stored_server_get_one_session(
    tmp_path: Path,
) -> None:
    """Item 1: with a store, the request id's lookup awaits the store; retries racing through
    it each made a session (a unique-constraint error, then a KeyError on the pending map, and
    a waiter left hanging). All of them, sent at once, must get the one session."""
    server = await build_server(ServerConfig(port=0, store_path=tmp_path / "store.db"))
    await server.start()
    owner = secrets.token_urlsafe(24)
    try:
        async with owner_channel(server.address, owner) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            for round_no in range(3):
                calls = [
                    control.CreateSession(create_request(owner, f"job-{round_no}"), timeout=TIMEOUT)
                    for _ in range(12)
                ]
                answers = await asyncio.gather(*calls, return_exceptions=True)
                failures = [a for a in answers if isinstance(a, BaseException)]
                assert not failures, [
                    (f.code(), f.details()) if isinstance(f, grpc.aio.AioRpcError) else repr(f)
                    for f in failures
                ]
                ids = {a.session.session_id for a in answers if not isinstance(a, BaseException)}
                assert len(ids) == 1, ids
            listed = await control.ListSessions(control_pb2.ListSessionsRequest())
            assert len(listed.sessions) == 3
    finally:
        await server.stop(0.5)
