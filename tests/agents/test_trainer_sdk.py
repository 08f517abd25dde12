"""The SDK as a trainer uses it: the blocking client, session resets, a rollout pool.

Through a real server on 127.0.0.1: a reset starts the next episode under the seats that are
already joined (each follows it), and `iter_rollouts` hands episodes over as they end and
starts a new one only when the caller has taken one (back-pressure, on an endless plan).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import Iterator

import pytest

from metasre.agents import (
    ClientError,
    ConnectionLostError,
    EpisodeSpec,
    SyncClient,
    iter_rollouts,
    solo_player,
)
from metasre.agents.policies import ExpertPolicy, RandomPolicy
from metasre.agents.sync import WireCaller

PAY = "meta-sre/payment-bad-deploy-v2"


async def test_a_reset_starts_the_next_episode_under_the_joined_seats(server):
    def play() -> None:
        with SyncClient(server.address) as client:
            session = client.create_session(PAY, seed=1, seats=["a"])
            agent = client.agent(session.id, session.tokens["a"])
            assert agent.episode == 1
            first_page = agent.observation["text"]
            ExpertPolicy().play(WireCaller(agent), agent.observation)
            assert agent.conn.inbox.episode_end is not None
            reset = client.reset_session(session.id, seed=4)
            assert reset["session"]["episode"] == 2 and reset["observation"]["text"]
            assert agent.wait_episode(2, timeout=30)
            assert agent.conn.inbox.episode_end is None and agent.conn.inbox.rewards == []
            assert agent.observation["text"] != first_page  # seed 4's page
            result = agent.call("get_alerts")
            assert result.tick == 1 and not result.done
            with pytest.raises(ClientError) as bad:
                client.reset_session(session.id, seed=-1)
            assert bad.value.code == "INVALID_ARGUMENT"
            agent.close()

    await asyncio.to_thread(play)


async def test_the_rollout_pool_hands_episodes_over_as_they_end_with_back_pressure(server):
    pulled: list[int] = []

    def endless() -> Iterator[EpisodeSpec]:
        for i in itertools.count():
            pulled.append(i)
            yield EpisodeSpec(i, PAY, seed=i)

    def train() -> list[float]:
        grades = []
        with SyncClient(server.address) as client:
            tools = client.list_tools()
            pool = iter_rollouts(
                client, solo_player(lambda seed: RandomPolicy(seed, tools)), endless(), parallel=3
            )
            with contextlib.closing(pool):
                for taken, result in enumerate(pool, 1):
                    # Never more episodes started than taken plus the pool's width.
                    assert len(pulled) <= taken - 1 + 3, (taken, len(pulled))
                    assert result.graded and result.error == ""
                    grades.append(result.grade)
                    if taken == 5:
                        break
        return grades

    grades = await asyncio.to_thread(train)
    assert len(grades) == 5
    assert len(pulled) <= 4 + 3  # the loop left: the episodes in flight finished, no more began
    assert server.registry.sessions() == []  # and every one's session is closed


async def test_closing_the_client_tells_a_thread_still_waiting_on_it(server):
    """A rollout thread blocked on a seat when the client closes (Ctrl-C) is told, not hung."""

    def play() -> None:
        client = SyncClient(server.address)
        session = client.create_session(PAY, seed=1, seats=["a"])
        agent = client.agent(session.id, session.tokens["a"])
        told: list[BaseException] = []
        waiting = threading.Event()

        def wait_forever() -> None:
            waiting.set()
            try:
                agent.wait_news(agent.news + 1000)  # nothing of the sort will come
            except BaseException as exc:
                told.append(exc)

        waiter = threading.Thread(target=wait_forever)
        waiter.start()
        waiting.wait()
        client.close()
        waiter.join(timeout=30)
        assert not waiter.is_alive()
        assert len(told) == 1 and isinstance(told[0], ConnectionLostError), told
        with pytest.raises(ConnectionLostError):
            client.create_session(PAY, seed=1)

    await asyncio.to_thread(play)
