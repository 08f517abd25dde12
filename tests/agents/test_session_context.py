"""The SDK's session context: a loop of episodes copied from the README never meets a cap.

Against a real server whose owner quota is 2: the loop plays more episodes than that, one
session each, with a client that never retries, so a session left open would be refused.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from metasre.agents import ClientError, MetasreClient, RetryPolicy
from metasre.agents.sync import SyncClient
from metasre.service import Limits, ServerConfig, build_server
from metasre.simulator import resolve

PAY = "payment-bad-deploy"


@contextlib.asynccontextmanager
async def serving(limits: Limits) -> AsyncIterator[str]:
    server = await build_server(ServerConfig(port=0, limits=limits, grace_seconds=0.5))
    await server.start()
    try:
        yield server.address
    finally:
        await server.stop(0.5)


async def test_a_loop_of_sessions_in_their_context_never_meets_the_owner_quota():
    async with (
        serving(Limits(max_sessions_per_owner=2)) as address,
        MetasreClient(address, retry=RetryPolicy.never()) as client,
    ):
        for seed in range(5):
            async with (
                client.session(PAY, seed=seed, seats=["me"]) as session,
                client.agent(session.id, session.tokens["me"]) as agent,
            ):
                await agent.call("get_alerts")
            # the context closed it: gone from the owner's open sessions
            assert not await open_sessions(client)


async def test_the_context_closes_its_session_when_the_block_fails_or_closed_it_already():
    async with (
        serving(Limits(max_sessions_per_owner=1)) as address,
        MetasreClient(address, retry=RetryPolicy.never()) as client,
    ):
        with pytest.raises(RuntimeError, match="the agent crashed"):
            async with client.session(PAY, seats=["me"]):
                raise RuntimeError("the agent crashed")
        assert not await open_sessions(client)
        async with client.session(PAY, seats=["me"]) as session:
            await client.close_session(session.id)  # closed by hand: no error on exit
        # ended and left: the episode's end does not make the exit fail either
        async with (
            client.session(PAY, seats=["me"]) as session,
            client.agent(session.id, session.tokens["me"]) as agent,
        ):
            for step in resolve(PAY).instance(0).spec.solution:
                await agent.call(step.tool, dict(step.args))
        # a quota of one, and yet every session above was made: each was closed in turn
        with pytest.raises(ClientError) as err:
            async with client.session(PAY, seats=["me"]), client.session(PAY, seats=["me"]):
                pass
        assert err.value.reason == "OWNER_AT_QUOTA"
        assert not await open_sessions(client)


async def open_sessions(client: MetasreClient) -> list[str]:
    return [s["session_id"] for s in await client.list_sessions()]


async def test_the_blocking_client_has_the_same_context():
    async with serving(Limits(max_sessions_per_owner=1)) as address:
        await asyncio.to_thread(play_blocking, address)


def play_blocking(address: str) -> None:
    with SyncClient(address, retry=RetryPolicy.never()) as client:
        for seed in range(3):
            with client.session(PAY, seed=seed, seats=["me"]) as session:
                agent = client.agent(session.id, session.tokens["me"])
                agent.call("get_alerts")
                agent.close()
        assert not client.list_sessions()
