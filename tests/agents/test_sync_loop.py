"""Closing a blocking client ends the tasks its event loop still runs (`metasre.agents.sync`)."""

from __future__ import annotations

import asyncio

from metasre.agents.sync import LoopThread


def test_closing_the_loop_cancels_and_awaits_its_pending_tasks() -> None:
    """A task still pending when the loop stops is collected with "Task was destroyed but it is
    pending!" on stderr (Ctrl-C of `metasre llm` while the model thinks left a stream's task so;
    issue 28): close() cancels each and lets it run its cleanup first."""
    loop = LoopThread()
    cleaned: list[str] = []

    async def stream() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append("stream")

    async def start() -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(stream())
        await asyncio.sleep(0)  # let it start waiting
        return task

    task = loop.run(start())
    loop.close()
    assert task.cancelled() and cleaned == ["stream"]
    loop.close()  # a second close is a no-op
