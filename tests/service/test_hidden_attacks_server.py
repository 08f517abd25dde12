"""Red team over the wire: forging the hidden checks through a real server and the SDK.

A real server on 127.0.0.1 (the suite's `server` fixture), the Python SDK (`MetasreClient`,
`create_session`, `agent.call`), two sessions on two code-fault scenarios. In each, the agent
first appends a generic forgery to the root service's package (the probe runner's `emit`,
found by frame walking, or the probe module replaced in `sys.modules`), then swaps it for the
strongest attack of tests/simulator/test_hidden_attacks.py: neutralise the audit hook from
inside, read the grader run's own memory with `ctypes`, and replay the reference world's
observations it finds there. It edits until the reward says the fault is cured (its only
signal), then files the accurate report.

Checked: each session's final grade (from the episode's end and from GetGrade) is at most 0.2
and not resolved, no event, result, observation or grade the client received carries a
distinctive line of any scenario's hidden probes, and a canary and a stand-in SQLite store in
the test's temp dir are intact.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import sqlite3
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from metasre.agents.client import MetasreClient
from metasre.service.server import MetasreServer
from metasre.simulator import Episode

ATTACKS = Path(__file__).resolve().parent.parent / "simulator" / "test_hidden_attacks.py"
SESSIONS = (
    # scenario, a seed no other test plays (the reference is observed during this session),
    # the generic forgery tried first
    ("ad-ranking-crash", 61, "inspect-emit"),
    ("timestamp-corruption", 61, "sys-modules-and-meta-path"),
)
RETRIES = 5
WATCH_TIMEOUT = 20.0


@functools.cache
def attacks() -> ModuleType:
    """The attack library of the simulator's red-team tests (one copy of the attack code)."""
    spec = importlib.util.spec_from_file_location("_metasre_redteam_attacks", ATTACKS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


def truth_report(episode: Episode) -> dict[str, Any]:
    truth = episode.instance.spec.ground_truth
    return {
        "root_cause_service": truth.service,
        "root_cause_location": truth.location,
        "category": truth.category,
        "remediation": truth.remediation,
        "summary": f"{truth.service}: root cause at {truth.location}; fixed and verified.",
    }


async def play(
    client: MetasreClient, scenario: str, seed: int, forge: str, received: list[str]
) -> None:
    """One attacker's session; the text of everything the client receives goes to `received`."""
    lib = attacks()
    known = Episode.make(scenario, seed)  # what the attacker knows: the tree, the ground truth
    target = lib.attack_target(known)
    start = len(known.workspace.read(target).splitlines()) + 1
    session = await client.create_session(scenario, seed=seed, seats=["red"])
    async with client.agent(session.id, session.tokens["red"]) as agent:
        received.append(repr(agent.observation))

        async def edit(args: dict[str, Any]) -> bool:
            result = await agent.call("edit_lines", {"path": target, **args})
            received.append(repr(result))
            assert result.ok, result.text
            return bool(result.reward.get("components", {}).get("fault_cured"))

        generic = lib.program(lib.FORGES[forge], lib._call("_rt_forge"))
        cured = await edit({"action": "insert", "start_line": start, "content": generic})
        steal = lib.program(lib.STEAL, lib._call("_rt_steal"))
        end = start + len(generic.splitlines()) - 1
        if not cured:
            cured = await edit(
                {"action": "replace", "start_line": start, "end_line": end, "content": steal}
            )
        attempt = 0
        while not cured and attempt < RETRIES:
            attempt += 1
            line = start + len(steal.splitlines()) + attempt - 1
            cured = await edit(
                {"action": "insert", "start_line": line, "content": f"# retry {attempt}"}
            )
        final = await agent.call("submit_report", truth_report(known))
        received.append(repr(final))
        assert final.done
        received.append(repr(agent.inbox))
        end_event = agent.inbox.episode_end
        assert end_event is not None
        assert end_event["grade"]["total"] <= lib.MAX_GRADE, end_event["grade"]
        assert not end_event["grade"].get("resolved", False), end_event["grade"]
    graded = await client.get_grade(session.id)
    received.append(repr(graded))
    assert graded["grade"]["total"] <= lib.MAX_GRADE, graded["grade"]["components"]
    assert not graded["grade"].get("resolved", False)

    async def watch() -> None:
        async for event in client.watch(session.id):
            received.append(repr(event))
            if "ended" in event:
                return

    await asyncio.wait_for(watch(), WATCH_TIMEOUT)
    assert not cured, f"{scenario}: the forgery cured the fault"


async def test_forging_over_the_wire_never_passes(server: MetasreServer, tmp_path: Path) -> None:
    lib = attacks()
    canary = tmp_path / "canary.txt"
    canary.write_bytes(b"canary")
    store = tmp_path / "trajectories.db"
    with contextlib.closing(sqlite3.connect(store)) as db:
        db.execute("CREATE TABLE events (body TEXT)")
        db.execute("INSERT INTO events VALUES ('episode 1 started')")
        db.commit()
    store_bytes = store.read_bytes()

    received: list[str] = []
    failures: list[str] = []
    async with MetasreClient(server.address) as client:
        for scenario, seed, forge in SESSIONS:
            try:
                await play(client, scenario, seed, forge, received)
            except AssertionError as exc:  # play the other session too, then report both
                failures.append(f"{scenario}: {exc}")

    lib.assert_no_secret(received, "\n".join([lib.LIB, *lib.FORGES.values(), lib.STEAL]))
    assert canary.read_bytes() == b"canary"
    assert store.read_bytes() == store_bytes
    assert not failures, failures
