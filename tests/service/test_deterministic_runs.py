"""The same calls grade the same: live, on replay, on recovery and in the counterfactuals.

Agent code that depends on chance and on the clock is the case that breaks this: a team's fix
that draws bits from ``random``, ``time.time``, ``time.monotonic``, ``datetime.now``,
``os.urandom`` and ``uuid4`` and reverses some of its rankings by them. Every sandboxed run sees a
fixed clock and seeded streams, so each run of that code computes the same thing.

A real ``metasre serve`` process with a store plays a two-seat DIFFERENCE session (seat a
edits and reports, seat b reads the logs); then

* recovery: the server is killed and started again on the same store; it rebuilds the
  session by replaying it, in a new process whose sandboxes never saw this code, and
  GetGrade shows that replay's grade: equal to the live one, check for check;
* replay: this test's own process replays the stored calls on a fresh episode: same grade;
* counterfactuals: G_without_i, recomputed here, equals what the live server paid (b's calls
  change nothing, so the team's grade without b is the team's grade).
"""

from __future__ import annotations

import contextlib
import signal
from pathlib import Path
from typing import Any

from metasre.agents.client import MetasreClient
from metasre.service.core.attribution import Attribution, credit
from metasre.simulator import Episode
from metasre.simulator.replay import RecordedCall, replay

from .conftest import AD
from .serve_process import metasre_serve

SEED = 10
CHANCE = (
    "\n\nimport datetime as _rt_datetime, os as _rt_os, random as _rt_random\n"
    "import time as _rt_time, uuid as _rt_uuid\n"
    "_rt_bits = (_rt_random.getrandbits(16) ^ int(_rt_time.time() * 1e6)\n"
    "            ^ _rt_datetime.datetime.now().microsecond ^ int(_rt_time.monotonic() * 1e6)\n"
    "            ^ int.from_bytes(_rt_os.urandom(2), 'big') ^ _rt_uuid.uuid4().int) & 0xFFFF\n"
    "_rt_calls = [0]\n"
    "_rt_rank_ads = rank_ads\n"
    "def rank_ads(*args, **kwargs):\n"
    "    ranked = _rt_rank_ads(*args, **kwargs)\n"
    "    _rt_calls[0] += 1\n"
    "    return ranked[::-1] if _rt_bits >> (_rt_calls[0] % 16) & 1 else ranked\n"
)
"""Appended to the fixed module: each run draws 16 bits from every source of chance and of
time, and the n-th ranking of the run comes out reversed when bit n is set. Without a fixed
clock and seeded streams two runs of this code pass different checks (the test fails then)."""


def _edit() -> dict[str, Any]:
    start = Episode.make(AD, SEED)
    reference = Episode.make(AD, SEED)
    fix = next(s for s in reference.instance.spec.solution if s.tool == "edit_lines")
    path = str(fix.args["path"])
    reference.apply("ref", "edit_lines", dict(fix.args))
    lines = len(start.workspace.read(path).splitlines())
    content = reference.workspace.read(path) + CHANCE
    return {
        "path": path,
        "action": "replace",
        "start_line": 1,
        "end_line": lines,
        "content": content,
    }


def _report() -> dict[str, Any]:
    truth = Episode.make(AD, SEED).instance.spec.ground_truth
    return {
        "root_cause_service": truth.service,
        "root_cause_location": truth.location,
        "category": truth.category,
        "remediation": truth.remediation,
        "summary": "restored the feature-row lookup",
    }


def _graded(grade: dict[str, Any]) -> tuple[Any, ...]:
    return (
        grade["total"],
        grade.get("resolved", False),
        sorted(grade.get("fail_to_pass", {}).items()),
        sorted(grade.get("pass_to_pass", {}).items()),
    )


async def test_time_and_chance_in_agent_code_grade_the_same_everywhere(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    owner = "deterministic-runs-owner-token-0001"
    edit = _edit()
    async with contextlib.AsyncExitStack() as stack:
        server = await stack.enter_async_context(metasre_serve("--store", str(db)))
        client = await stack.enter_async_context(MetasreClient(server.address, owner_token=owner))
        session = await client.create_session(
            AD, seed=SEED, seats=["a", "b"], attribution="DIFFERENCE"
        )
        a = await stack.enter_async_context(client.agent(session.id, session.tokens["a"]))
        b = await stack.enter_async_context(client.agent(session.id, session.tokens["b"]))
        assert (await a.call("edit_lines", edit)).ok
        assert (await b.call("read_logs", {"service": "ad_ranking"})).ok
        assert (await a.call("submit_report", _report())).done
        live = await client.get_grade(session.id)
        trajectory = await client.get_trajectory(session.id)
        await a.close()
        await b.close()
        # a crash: a graceful stop would close the session, and only open ones are rebuilt
        server.proc.send_signal(signal.SIGKILL)
        await server.proc.wait()
    live_grade = _graded(live["grade"])
    assert live["grade"].get("final")

    # recovery: a new server process on the same store replays the session and grades it anew
    async with contextlib.AsyncExitStack() as stack:
        server = await stack.enter_async_context(metasre_serve("--store", str(db)))
        client = await stack.enter_async_context(MetasreClient(server.address, owner_token=owner))
        recovered = await client.get_grade(session.id)
        await server.stop()
    assert _graded(recovered["grade"]) == live_grade
    assert recovered["agent_rewards"] == live["agent_rewards"]

    # replay in this process, from the stored trajectory
    calls = [
        RecordedCall(
            agent_id=e["applied"]["agent_id"],
            tool=e["applied"]["tool"],
            args=e["applied"].get("args", {}),
        )
        for e in trajectory
        if "applied" in e
    ]
    assert [c.tool for c in calls] == ["edit_lines", "read_logs", "submit_report"]
    episode = Episode.make(AD, SEED)
    replay(episode, calls)
    replayed = episode.grade()
    assert replayed.total == live["grade"]["total"]
    assert dict(replayed.fail_to_pass) == live["grade"].get("fail_to_pass", {})

    # counterfactuals, recomputed here, against what the live server paid at the end
    credited = credit(Attribution.DIFFERENCE, AD, SEED, calls, ["a", "b"], replayed, costs={})
    assert credited["b"]["counterfactual_grade"] == -credited["b"]["team_grade"]
    paid = {
        e["reward"]["agent_id"]: e["reward"]["components"]
        for e in trajectory
        if "reward" in e and "counterfactual_grade" in e["reward"].get("components", {})
    }
    assert {a: c["counterfactual_grade"] for a, c in paid.items()} == {
        a: c["counterfactual_grade"] for a, c in credited.items()
    }
