"""A closed session is freed by reference counting: nothing it held waits for a full collection.

Before, a session's streams and their tasks formed cycles with it (a cancelled task holds its
frames through the CancelledError's traceback, the frames hold the stream, the stream the
session), so every closed session's log and world stayed in memory until the GC freezer's
next reclaim walked the whole heap.
"""

from __future__ import annotations

import asyncio
import gc
import weakref

from metasre.agents.client import MetasreClient

from .conftest import PAY, pay_solution


async def test_a_closed_session_is_freed_without_the_garbage_collector(server):
    async with MetasreClient(server.address) as client:
        handle = await client.create_session(PAY, seats=["a", "b"])
        a = client.agent(handle.id, handle.tokens["a"])
        b = client.agent(handle.id, handle.tokens["b"], batch_events=False)
        await asyncio.gather(a.join(), b.join())
        for tool, args in pay_solution()[:-1]:
            await a.call(tool, args)
        await b.call("get_alerts")
        session = weakref.ref(server.registry.get(handle.id)[0])
        episode = weakref.ref(server.registry.get(handle.id)[0].episode)
        gc.collect()
        gc.disable()
        try:
            await a.close()
            await b.close()
            await client.close_session(handle.id)
            for _ in range(500):  # the streams' handlers finish on the server's loop
                if session() is None:
                    break
                await asyncio.sleep(0.01)
            assert session() is None, gc.get_referrers(session())
            assert episode() is None
        finally:
            gc.enable()
