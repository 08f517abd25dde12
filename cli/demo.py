"""`metasre demo`: a server on a free port, the scripted team on an incident, a play-by-play."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from metasre.agents import MetasreClient
from metasre.agents.sync import SyncClient
from metasre.agents.team_session import play_seated_team, team_seats
from metasre.service import ServerConfig, build_server
from metasre.service.server import prepare_sandbox
from metasre.simulator.tools import TOOLS


def _args(args: Mapping[str, Any]) -> str:
    parts = []
    for key, value in args.items():
        if value is None or value == []:
            continue  # defaults the agent did not set
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON numbers travel as doubles
        text = json.dumps(value) if not isinstance(value, str) else value
        parts.append(f"{key}={text if len(text) <= 40 else text[:37] + '...'}")
    return ", ".join(parts)


def _first_line(text: str, width: int = 78) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 3] + "..."


class PlayByPlay:
    """Prints a session's events as a spectator sees them."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.ended: dict[str, Any] | None = None
        self._last_reward: tuple[Any, ...] | None = None
        self._reward_agents: list[str] = []
        self._reward_text = ""

    def _flush_reward(self) -> None:
        if self._reward_agents:
            who = ", ".join(self._reward_agents)
            self.out.write(f"{'':22}reward {who}: {self._reward_text}\n")
        self._last_reward, self._reward_agents = None, []

    def show(self, event: Mapping[str, Any]) -> None:
        """Print one watched event."""
        if "reward" not in event:
            self._flush_reward()
        if "applied" in event:
            a = event["applied"]
            mark = "" if a.get("ok") else "  (refused by the world)"
            self.out.write(
                f" t+{a.get('clock', 0):5.1f}m #{a['tick']:<3} {a['agent_id']:<12} "
                f"{a['tool']}({_args(a.get('args', {}))}){mark}\n"
            )
            tool = TOOLS.get(a["tool"])
            if tool is None or not tool.sends_message:  # a message shows as its own event
                self.out.write(f"{'':22}-> {_first_line(str(a.get('text', '')))}\n")
        elif "message" in event:
            m = event["message"]
            to = ", ".join(m.get("to", [])) or "team"
            self.out.write(
                f"{'':22}{m['from_agent_id']} -> {to}: {_first_line(str(m['text']), 70)}\n"
            )
        elif "reward" in event:
            r = event["reward"]
            parts = ", ".join(
                f"{k} {v:+.2f}"
                for k, v in sorted(r.get("components", {}).items())
                if k != "step_cost"
            )
            key = (r.get("tick"), parts, r.get("total"))
            if not parts:
                return
            if key == self._last_reward:
                # Shared rewards credit every agent the same: one line names them all.
                self._reward_agents.append(r["agent_id"])
                return
            self._flush_reward()
            self._last_reward, self._reward_agents = key, [r["agent_id"]]
            self._reward_text = f"{r['total']:+.3f} ({parts})"
        elif "ended" in event:
            self.ended = event["ended"]


def _team(address: str, session_id: str, tokens: Mapping[str, str]) -> None:
    with SyncClient(address) as client:
        play_seated_team(client, session_id, tokens)


async def run_demo(scenario: str, seed: int, policy: str, store: Path | None, out: TextIO) -> int:
    """Serve, play the team, narrate, print the grade; the exit code."""
    config = ServerConfig(host="127.0.0.1", port=0, store_path=store)
    server = await build_server(config)
    await server.start()
    narrator = PlayByPlay(out)
    try:
        async with MetasreClient(server.address) as client:
            seats = team_seats([str(t["name"]) for t in await client.list_tools()])
            session = await client.create_session(
                scenario, seed=seed, seats=seats, turn_policy=policy
            )
            out.write(
                f"META-SRE demo: {scenario} seed {seed}, a team of three under {policy}, "
                f"server {server.address}\n\n"
            )

            async def watch() -> None:
                async for event in client.watch(session.id):
                    narrator.show(event)
                    if narrator.ended is not None:
                        return

            watcher = asyncio.create_task(watch())
            await asyncio.to_thread(_team, server.address, session.id, session.tokens)
            await asyncio.wait_for(watcher, 30)
            grade = await client.get_grade(session.id)
    finally:
        await server.stop(1.0)
    g = grade["grade"]
    out.write(f"\nGrade {g['total']:.3f} ({'resolved' if g.get('resolved') else 'NOT resolved'})\n")
    for c in g.get("components", []):
        weight = f"x {c['weight']:.2f}" if c.get("weight") else "penalty"
        out.write(
            f"  {c['name']:<16} {c['score']:6.2f} {weight:<8} = {c['value']:+.3f}  "
            f"{c.get('detail', '')}\n"
        )
    out.write(
        f"Trajectory stored in {store}; `metasre export --store {store}` writes it as JSONL.\n"
    )
    rewards = grade.get("agent_rewards", {})
    if rewards:
        out.write(
            "Rewards: " + ", ".join(f"{k} {v:+.3f}" for k, v in sorted(rewards.items())) + "\n"
        )
    return 0


def main(scenario: str, seed: int, policy: str, store: Path | None) -> int:
    """Entry point of `metasre demo`."""
    # The sandbox's helper must exist before any gRPC thread does.
    prepare_sandbox(weak_isolation=os.environ.get("METASRE_ALLOW_WEAK_ISOLATION") == "1")
    return asyncio.run(run_demo(scenario, seed, policy, store, sys.stdout))
