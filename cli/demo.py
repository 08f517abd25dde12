"""`metasre demo`: a server on a free port, the scripted team on an incident, a play-by-play."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from ..agents.policies.team import ROLES, RoleSeat
from ..agents.team_session import (
    TEAM_TURN_TIMEOUT,
    play_seated_role_team,
    play_seated_team,
    role_seats,
    team_seats,
)
from ..service import ServerConfig
from ..simulator.tools import TOOLS
from .connection import Connection
from .errors import ExitCode, UsageError
from .interrupt import Interrupt
from .rollout import resolve_scenarios
from .serving import local_store, prepare, running


def _args(args: Mapping[str, Any]) -> str:
    parts = []
    # By name: a Struct's keys come in no fixed order, and two runs must print alike.
    for key, value in sorted(args.items()):
        if value is None or value == []:
            continue  # defaults the agent did not set
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON numbers travel as doubles
        text = json.dumps(value) if not isinstance(value, str) else value
        # One call, one line: a message or an edit with newlines would break the columns.
        text = text.replace("\r", "").replace("\n", "\\n")
        parts.append(f"{key}={text if len(text) <= 40 else text[:37] + '...'}")
    return ", ".join(parts)


def _first_line(text: str, width: int = 78) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 3] + "..."


class PlayByPlay:
    """Prints a session's events as a spectator sees them."""

    def __init__(self, out: TextIO, agents: Sequence[str] = ()) -> None:
        self.out = out
        self._width = max((len(a) for a in agents), default=12)
        """The agent column: as wide as the longest agent id (a role's, say)."""
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
                f" t+{a.get('clock', 0):5.1f}m #{a['tick']:<3} {a['agent_id']:<{self._width}} "
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


REWARD_VS_GRADE = (
    "  reward = what an agent was paid: the sum of its per-step rewards (shaping as calls\n"
    "           applied, then its share of the grade), so it can pass 1\n"
    "  grade  = the grader's score of the team's outcome, in [0, 1]\n"
)


async def run_demo(args: argparse.Namespace, out: TextIO, interrupt: Interrupt) -> int:
    """Serve (or use --target), play the team, narrate, print the grade; the exit code."""
    connection = Connection.from_args(args)
    store = local_store(args, connection)
    async with contextlib.AsyncExitStack() as stack:
        if connection.target:
            address = connection.target
        else:
            config = ServerConfig(host="127.0.0.1", port=0, store_path=store, grace_seconds=1.0)
            address = (await stack.enter_async_context(running(config))).address
        client = await stack.enter_async_context(connection.client(address))
        offered = {str(s["id"]): s for s in await client.list_scenarios()}
        try:
            (scenario,) = resolve_scenarios([args.scenario], list(offered))
        except LookupError as exc:
            raise UsageError(str(exc.args[0])) from None
        info = offered[scenario]
        # A family built for a team declares its roles: seat them, each with its own view.
        roles = tuple(RoleSeat.of(r) for r in info.get("roles", ()))
        seats = (
            role_seats(roles)
            if roles
            else team_seats([str(t["name"]) for t in await client.list_tools()])
        )
        session = await client.create_session(
            scenario,
            seed=args.seed,
            seats=seats,
            turn_policy=args.policy,
            turn_timeout_seconds=TEAM_TURN_TIMEOUT,
        )
        loop = asyncio.get_running_loop()
        interrupted = asyncio.Event()
        interrupt.on_interrupt(lambda: loop.call_soon_threadsafe(interrupted.set))
        team_text = (
            f"a team of its {len(roles)} roles ({', '.join(r.name for r in roles)}), each seeing"
            " only its view,"
            if roles
            else f"a team of {len(ROLES)} generalists ({', '.join(ROLES)})"
        )
        out.write(
            f"META-SRE demo: {team_text} under {args.policy}, server {address}\n"
            f"Incident: {info.get('title', scenario)}\n"
            f"  {scenario} seed {args.seed}, severity {info.get('severity', '?')}, "
            f"{info.get('difficulty', '?')}; mitigate within {info.get('sla_minutes', 0):g} "
            f"simulated minutes and {info.get('step_budget', 0)} calls\n"
            + "".join(f"  role {r.name}: {r.description}\n" for r in roles)
            + "\n"
        )
        out.flush()
        narrator = PlayByPlay(out, list(session.tokens))

        async def watch() -> None:
            async for event in client.watch(session.id):
                narrator.show(event)
                out.flush()
                if narrator.ended is not None:
                    return

        watcher = asyncio.create_task(watch())
        team_client = stack.enter_context(connection.sync_client(address))
        # A daemon thread: on Ctrl-C the team may be blocked on a call that never comes back,
        # and the process must not wait for it to exit.
        team_done: asyncio.Future[None] = loop.create_future()

        def team() -> None:
            try:
                if roles:
                    play_seated_role_team(team_client, session.id, session.tokens, roles)
                else:
                    play_seated_team(team_client, session.id, session.tokens)
                result: BaseException | None = None
            except BaseException as exc:  # handed to the loop, raised there
                result = exc
            if interrupted.is_set():
                return  # Ctrl-C closed the session under the team: nothing left to report
            with contextlib.suppress(RuntimeError):  # the command has already returned
                loop.call_soon_threadsafe(_settle, team_done, result)

        threading.Thread(target=team, name="demo-team", daemon=True).start()
        stopped = asyncio.ensure_future(_until(interrupted))
        await asyncio.wait({team_done, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if interrupted.is_set():
            watcher.cancel()
            with contextlib.suppress(Exception):
                await client.close_session(session.id)
            out.write("\ninterrupted: the session is closed; no grade\n")
            return ExitCode.INTERRUPTED
        stopped.cancel()
        team_done.result()
        # The end is pushed to the watcher right after the last call; a team that stopped
        # without ending the episode leaves it waiting.
        ended = True
        try:
            await asyncio.wait_for(watcher, 10)
        except TimeoutError:
            ended = False
        grade = await client.get_grade(session.id)
        with contextlib.suppress(Exception):
            await client.close_session(session.id)
    g = grade["grade"]
    if not ended:
        out.write(
            f"\nThe team stopped before the episode ended: provisional grade "
            f"{g.get('total', 0.0):.3f}\n"
        )
        return ExitCode.FAILED
    out.write(f"\nGrade {g['total']:.3f} ({'resolved' if g.get('resolved') else 'NOT resolved'})\n")
    for c in g.get("components", []):
        # A component with neither weight nor score only explains (the soak): not a penalty.
        weight = f"x {c['weight']:.2f}" if c.get("weight") else "penalty" if c["score"] else "note"
        out.write(
            f"  {c['name']:<16} {c['score']:6.2f} {weight:<8} = {c['value']:+.3f}  "
            f"{c.get('detail', '')}\n"
        )
    rewards = grade.get("agent_rewards", {})
    if rewards:
        out.write(
            "Rewards: " + ", ".join(f"{k} {v:+.3f}" for k, v in sorted(rewards.items())) + "\n"
        )
        out.write(REWARD_VS_GRADE)
    if store is not None:
        out.write(
            f"Trajectory stored in {store}; `metasre export --store {store} --out FILE` writes "
            "it as JSONL.\n"
        )
    return ExitCode.OK


async def _until(event: asyncio.Event) -> None:
    await event.wait()


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


def main(args: argparse.Namespace) -> int:
    """Entry point of `metasre demo`."""
    if not Connection.from_args(args).target:
        prepare()  # the sandbox's helper must exist before any gRPC thread does
    with Interrupt("closing the session") as interrupt:
        return asyncio.run(run_demo(args, sys.stdout, interrupt))
