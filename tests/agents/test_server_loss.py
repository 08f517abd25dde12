"""The SDK when its server is killed mid-call: a typed connection loss, and nothing left dangling.

A real `metasre serve` child process is killed with SIGKILL while an agent's call waits in a
SIMULTANEOUS round (its teammate never calls), then restarted on the same store and port, and
the agent resumes its seat; five times. Every loss is a `ConnectionLostError`, the tasks of the
dropped streams end (their count does not grow), and the event loop's exception handler hears
nothing ("Task was destroyed but it is pending!", "Task exception was never retrieved").
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from metasre.agents import ClientError, ConnectionLostError, MetasreClient
from metasre.service.process import start_serve

PAY = "meta-sre/payment-bad-deploy-v2"
TIMEOUT = 60.0
FAST_RECONNECT = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 500),
)


@contextlib.asynccontextmanager
async def loop_problems() -> AsyncIterator[list[dict[str, Any]]]:
    """What reaches the running loop's exception handler while the block runs."""
    loop = asyncio.get_running_loop()
    heard: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: heard.append(context))
    try:
        yield heard
    finally:
        loop.set_exception_handler(previous)


async def serve(db: Path, port: int = 0) -> tuple[asyncio.subprocess.Process, str]:
    return await start_serve(
        "--port", str(port), "--store", str(db), cwd=db.parent, timeout=TIMEOUT
    )


async def kill(proc: asyncio.subprocess.Process) -> None:
    proc.send_signal(signal.SIGKILL)
    await asyncio.wait_for(proc.wait(), TIMEOUT)


def other_tasks() -> set[asyncio.Task[Any]]:
    """The running tasks but the test's own: the client's and gRPC's."""
    current = asyncio.current_task()
    return {t for t in asyncio.all_tasks() if t is not current and not t.done()}


def stream_tasks() -> list[str]:
    """The names of the tasks that serve streams (the test's own task excluded)."""
    return sorted(t.get_coro().__qualname__ for t in other_tasks())  # type: ignore[union-attr]


async def test_a_killed_server_is_a_connection_loss_and_resumes_leave_nothing_dangling(
    tmp_path: Path,
):
    db = tmp_path / "store.db"
    proc, address = await serve(db)
    port = int(address.rpartition(":")[2])
    after_each: list[list[str]] = []
    try:
        async with loop_problems() as heard:
            async with MetasreClient(address, options=FAST_RECONNECT) as client:
                handle = await client.create_session(
                    PAY, seats=["a", "b"], turn_policy="SIMULTANEOUS", turn_timeout_seconds=60
                )
                agent = client.agent(handle.id, handle.tokens["a"])
                await agent.join()
                for cycle in range(5):
                    # b never calls, so a's call waits in the open round until the kill.
                    waiting = asyncio.create_task(agent.call("get_alerts", call_id=f"c{cycle}"))
                    await kill(proc)
                    with pytest.raises(ConnectionLostError) as lost:
                        await asyncio.wait_for(waiting, TIMEOUT)
                    assert lost.value.code in {"UNAVAILABLE", "INTERNAL"}, lost.value
                    # While no server listens, a resume is refused the same way, and calls
                    # fail with the loss instead of waiting for an answer nobody will give.
                    with pytest.raises(ConnectionLostError):
                        await agent.join(resume=True)
                    with pytest.raises(ConnectionLostError):
                        await agent.call("get_alerts")
                    proc, _ = await serve(db, port)
                    await client.wait_for_server(TIMEOUT)  # the channel reconnects
                    dropped = other_tasks()  # what served the dead streams
                    joined = await agent.join(resume=True)
                    assert joined["agent_id"] == "a"
                    # Every one of them ends (they may still be finishing as the resume lands).
                    if dropped:
                        _, left = await asyncio.wait(dropped, timeout=TIMEOUT)
                        assert not left, [t.get_coro() for t in left]
                    after_each.append(stream_tasks())
                await agent.close()
            gc.collect()  # a pending task nobody holds is reported when it is collected
        assert not heard, [c.get("message") for c in heard]
        # One live stream's tasks, the same after every cycle: none of a dropped stream's stay.
        assert all(tasks == after_each[0] for tasks in after_each), after_each
        assert after_each[0].count("_StreamRequestMixin._consume_request_iterator") == 1
        assert stream_tasks() == []
    finally:
        if proc.returncode is None:
            await kill(proc)


async def test_a_refused_join_is_a_client_error_and_ends_its_stream(tmp_path: Path):
    db = tmp_path / "store.db"
    proc, address = await serve(db)
    try:
        async with loop_problems() as heard:
            async with MetasreClient(address) as client:
                handle = await client.create_session(PAY, seats=["a"])
                agent = client.agent(handle.id, "not-the-token")
                with pytest.raises(ClientError) as refused:
                    await agent.join()
                assert not isinstance(refused.value, ConnectionLostError)
                assert refused.value.code == "PERMISSION_DENIED"
            gc.collect()
        assert not heard, [c.get("message") for c in heard]
    finally:
        if proc.returncode is None:
            await kill(proc)
