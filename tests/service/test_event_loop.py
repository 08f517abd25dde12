"""`metasre serve` runs on uvloop's event loop, and plays an episode as asyncio's loop does.

Two real server processes, one on each loop (`METASRE_EVENT_LOOP=asyncio` keeps the standard
library's), each with its store: a team of two plays the same calls of a code-fault incident
(the reference fix and its report, a teammate reading alongside) on both, and everything a
seat is told (each result's text, data, observation and reward, the teammate's applied calls,
the grade) is the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from metasre.agents.client import MetasreClient
from metasre.service.server import EVENT_LOOP_ENV
from metasre.simulator import resolve

from .conftest import AD
from .serve_process import metasre_serve

SEED = 4


def _answer(result: Any) -> tuple[Any, ...]:
    return (result.ok, result.error_code, result.text, result.data, result.reward)


async def _play(address: str) -> dict[str, Any]:
    spec = resolve(AD).instance(SEED).spec
    async with MetasreClient(address) as client:
        handle = await client.create_session(AD, seed=SEED, seats=["fixer", "reader"])
        async with (
            client.agent(handle.id, handle.tokens["fixer"]) as fixer,
            client.agent(handle.id, handle.tokens["reader"]) as reader,
        ):
            answers = []
            for step in spec.solution:
                looked = await reader.call("read_logs", {"service": spec.ground_truth.service})
                done = await fixer.call(step.tool, step.args)
                answers += [_answer(looked), _answer(done)]
            seen = 0
            while reader.inbox.episode_end is None:  # the report ended it: told after the calls
                seen = await reader.next_news(seen, timeout=20)
            heard = [(a["agent_id"], a["tool"], a["ok"], a["text"]) for a in reader.inbox.applied]
        grade = await client.get_grade(handle.id)
    return {"answers": answers, "heard": heard, "grade": grade["grade"]}


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
async def test_the_server_says_which_loop_it_runs(tmp_path: Path, loop: str) -> None:
    env = {EVENT_LOOP_ENV: "asyncio"} if loop == "asyncio" else {}
    async with metasre_serve("--store", str(tmp_path / "t.db"), env=env) as served:
        await _play(served.address)
        assert await served.stop() == 0
    serving = next(e for e in served.events() if e["event"] == "serving")
    assert serving["event_loop"] == loop


async def test_both_loops_play_an_episode_alike(tmp_path: Path) -> None:
    plays = {}
    for loop, env in (("uvloop", {}), ("asyncio", {EVENT_LOOP_ENV: "asyncio"})):
        async with metasre_serve("--store", str(tmp_path / f"{loop}.db"), env=env) as served:
            plays[loop] = await _play(served.address)
    assert plays["uvloop"]["grade"]["resolved"] and plays["uvloop"]["heard"]
    assert plays["uvloop"] == plays["asyncio"]
