"""`metasre serve --handover`: a stopped server leaves its sessions to the next one on its store.

Real `metasre serve` processes on one store and one port, stopped with SIGTERM, one after the
other; the agent resumes its seat on the second and finishes the episode it began on the first.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from metasre.agents.client import MetasreClient
from metasre.agents.errors import ClientError
from metasre.agents.retry import RetryPolicy
from metasre.service import ServerConfig
from metasre.simulator import Episode

from .conftest import PAY, pay_solution
from .serve_process import metasre_serve

FAST_RECONNECT = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 200),
)


async def test_a_handed_over_session_is_resumed_on_the_next_server(tmp_path: Path):
    db = tmp_path / "store.db"
    steps = pay_solution(seed=2)
    async with metasre_serve("--store", str(db), "--handover") as first:
        port = int(first.address.rpartition(":")[2])
        # No retries: this test looks at the refusal the SDK otherwise waits out by itself
        # (tests/agents/test_retry.py).
        client = MetasreClient(first.address, options=FAST_RECONNECT, retry=RetryPolicy.never())
        handle = await client.create_session(PAY, seed=2, seats=["a"])
        agent = client.agent(handle.id, handle.tokens["a"])
        await agent.join()
        results = [await agent.call(*steps[0])]
        # SIGTERM: the call's stream ends saying where the session went, the process exits 0.
        assert await first.stop() == 0
        with pytest.raises(ClientError) as ended:
            await agent.call("get_alerts")
        assert ended.value.reason == "SERVER_HANDING_OVER"
        assert "resume your seat" in ended.value.message
    handed = [e for e in first.events() if e["event"] == "session_handed_over"]
    assert [e["session_id"] for e in handed] == [handle.id]
    assert not [e for e in first.events() if e["event"] == "session_closed"]

    async with metasre_serve("--store", str(db), "--handover", port=port) as second:
        await agent.join(resume=True)
        for step in steps[1:]:
            results.append(await agent.call(*step))
        grade = await client.get_grade(handle.id)
        await agent.close()
        await client.close()
        assert await second.stop() == 0
    recovered = [e for e in second.events() if e["event"] == "session_recovered"]
    assert [e["session_id"] for e in recovered] == [handle.id]

    # The episode went on where it stopped: the same as playing it in one go.
    straight = Episode.make(PAY, 2)
    for tool, args in steps:
        straight.apply("a", tool, args)
    assert [r.tick for r in results] == list(range(1, len(steps) + 1))
    assert grade["grade"]["total"] == pytest.approx(straight.grade().total)
    assert grade["grade"]["resolved"] is True


async def test_without_handover_a_stop_closes_the_sessions(tmp_path: Path):
    db = tmp_path / "store.db"
    async with metasre_serve("--store", str(db)) as served:
        async with MetasreClient(served.address) as client:
            handle = await client.create_session(PAY, seats=["a"])
        assert await served.stop() == 0
    closed = [e for e in served.events() if e["event"] == "session_closed"]
    assert [e["session_id"] for e in closed] == [handle.id]
    async with metasre_serve("--store", str(db)) as again:
        assert await asyncio.wait_for(again.stop(), 30) == 0
    assert not [e for e in again.events() if e["event"] == "session_recovered"]


def test_handover_needs_a_store():
    with pytest.raises(ValueError, match="needs a store"):
        ServerConfig(handover=True)
