"""`metasre rollout` (many graded episodes in parallel) and `metasre llm` (one LLM episode).

Both talk to a running server (`--target host:port`) or start one in process on a free port.
Heavy imports wait until a command runs, so `metasre --help` stays quick.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from metasre.agents.llm import LLMConfig
    from metasre.agents.rollout import EpisodePlayer, EpisodeSpec, Played, RolloutReport
    from metasre.agents.sync import SyncClient

AGENTS = ("expert", "random", "team", "llm")
REPORT_TOOL = "submit_report"
"""The tool only the team's commander may call (enforced by the server's seat permissions)."""


def add_parsers(sub: Any) -> None:
    """Register `rollout` and `llm` on the command line's subparsers."""
    p = sub.add_parser(
        "rollout",
        help="play many graded episodes in parallel and print a table per scenario",
        description="Play many graded episodes in parallel against a server (one started in "
        "process by default) and print a table per scenario.",
    )
    _add_target(p)
    _add_reward_mode(p)
    p.add_argument("--agent", choices=AGENTS, default="expert", help="who plays (default expert)")
    p.add_argument(
        "--scenario",
        action="append",
        dest="scenarios",
        metavar="ID",
        help="scenario id or name; repeat for several (default: all)",
    )
    p.add_argument(
        "--seeds", default="0-9", help="a range (0-9), a count (10) or a list (1,5-7); default 0-9"
    )
    p.add_argument(
        "--episodes",
        type=_positive,
        help="episodes in total, cycling over scenarios then seeds (default: one per pair)",
    )
    p.add_argument("--parallel", type=_positive, default=8, help="episodes at once (default 8)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument(
        "--no-progress", action="store_true", help="no progress bar (off anyway when not a TTY)"
    )
    _add_llm(p)
    p.set_defaults(func=rollout_command)

    p = sub.add_parser(
        "llm",
        help="play one episode with an LLM from an OpenAI-compatible endpoint",
        description="Play one episode with a model served by any OpenAI-compatible "
        "chat-completions endpoint (vLLM, Ollama, hosted APIs) and print the transcript "
        "and the grade.",
    )
    _add_target(p)
    _add_reward_mode(p)
    p.add_argument(
        "--scenario",
        default="payment-bad-deploy",
        help="scenario id or name (default payment-bad-deploy)",
    )
    p.add_argument("--seed", type=int, default=0, help="the incident's seed")
    p.add_argument("--json", action="store_true", help="print the conversation and grade as JSON")
    _add_llm(p)
    p.set_defaults(func=llm_command)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _add_reward_mode(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reward-mode",
        choices=("DENSE", "SPARSE"),
        default="DENSE",
        help="DENSE: shaping as each call applies (default); SPARSE: the grade only, at the end",
    )


def _add_target(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--target",
        metavar="HOST:PORT",
        help="a running server (default: start one in process on a free port)",
    )
    p.add_argument(
        "--admin-token-env",
        default="METASRE_ADMIN_TOKEN",
        metavar="NAME",
        help="environment variable holding the --target server's admin token, if it has one "
        "(default METASRE_ADMIN_TOKEN)",
    )


def _admin_token(args: argparse.Namespace) -> str | None:
    """The admin token for --target; a server started in process has none."""
    if not args.target:
        return None
    return os.environ.get(args.admin_token_env) or None


def _add_llm(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("LLM agent (OpenAI-compatible chat completions)")
    g.add_argument(
        "--base-url",
        help="API root, e.g. http://127.0.0.1:11434/v1 (env METASRE_LLM_BASE_URL "
        "or OPENAI_BASE_URL)",
    )
    g.add_argument("--model", help="model name (env METASRE_LLM_MODEL)")
    g.add_argument(
        "--api-key",
        help="API key (prefer env METASRE_LLM_API_KEY or OPENAI_API_KEY: flags show in ps)",
    )
    g.add_argument("--max-steps", type=_positive, default=40, help="chat requests per episode")
    g.add_argument("--temperature", type=float, default=0.0, help="sampling temperature")
    g.add_argument(
        "--llm-timeout", type=float, default=120.0, help="seconds per chat request (default 120)"
    )


def _llm_config(args: argparse.Namespace) -> LLMConfig:
    from metasre.agents.llm import LLMConfig

    return LLMConfig.from_env(
        base_url=args.base_url,
        model=args.model,
        api_key=args.api_key,
        max_steps=args.max_steps,
        temperature=args.temperature,
        timeout_seconds=args.llm_timeout,
    )


@contextlib.contextmanager
def serving(target: str | None, max_sessions: int = 256) -> Iterator[str]:
    """The address of `target`, or of a server started in process for the block's duration."""
    if target:
        yield target
        return
    from metasre.agents.sync import LoopThread
    from metasre.service import Limits, ServerConfig, build_server
    from metasre.service.server import prepare_sandbox

    # The sandbox's fork server must start before any gRPC thread exists.
    prepare_sandbox(weak_isolation=os.environ.get("METASRE_ALLOW_WEAK_ISOLATION") == "1")
    loop = LoopThread()
    config = ServerConfig(port=0, limits=Limits(max_sessions=max_sessions), grace_seconds=1.0)
    try:
        server = loop.run(build_server(config))
        loop.run(server.start())
        try:
            yield server.address
        finally:
            loop.run(server.stop(1.0))
    finally:
        loop.close()


def list_scenario_ids(client: SyncClient) -> list[str]:
    """The ids of the scenarios the server offers."""
    # SyncClient has no list_scenarios twin yet; run the async call on its loop.
    return [s["id"] for s in client._loop.run(client.client.list_scenarios())]


def resolve_scenarios(wanted: Sequence[str] | None, offered: Sequence[str]) -> list[str]:
    """Scenario ids for ids or names (`payment-bad-deploy`, `...-v1`); all when none or `all`.

    Raises:
        LookupError: a name matches no offered scenario (the message suggests close ones).
    """
    if not wanted or "all" in wanted:
        return list(offered)

    def short(sid: str) -> str:
        return re.sub(r"-v\d+$", "", sid.rsplit("/", 1)[-1])

    out: list[str] = []
    for name in wanted:
        match = [s for s in offered if name in (s, s.rsplit("/", 1)[-1], short(s))]
        if not match:
            close = difflib.get_close_matches(name, [short(s) for s in offered], n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise LookupError(
                f"no scenario {name!r} on the server{hint} (choose from: "
                f"{', '.join(short(s) for s in offered)})"
            )
        out += [m for m in match if m not in out]
    return out


def make_player(agent: str, client: SyncClient, args: argparse.Namespace) -> EpisodePlayer:
    """The episode player for `--agent`."""
    from metasre.agents.policies import ExpertPolicy, RandomPolicy
    from metasre.agents.rollout import solo_player

    if agent == "expert":
        return solo_player(lambda seed: ExpertPolicy(), "expert")
    if agent == "random":
        return solo_player(RandomPolicy, "random")
    if agent == "llm":
        from metasre.agents.llm import LLMPolicy

        config = _llm_config(args)
        tools = client.list_tools()
        return solo_player(lambda seed: LLMPolicy(config, tools), "llm")
    if agent == "team":
        return team_player()
    raise ValueError(f"unknown agent {agent!r}; choose from {', '.join(AGENTS)}")


def team_player() -> EpisodePlayer:
    """Seats the scripted team (commander, investigator, fixer); only the commander reports."""
    from metasre.agents.rollout import played
    from metasre.agents.team_session import play_team_session

    # The server's tools do not change during a rollout: asked for once per client, not per
    # episode (a ListTools reply carries every tool's JSON Schema).
    tools: dict[int, tuple[SyncClient, tuple[str, ...]]] = {}

    def play(client: SyncClient, spec: EpisodeSpec) -> Played:
        known = tools.get(id(client))
        if known is None or known[0] is not client:
            known = tools[id(client)] = (
                client,
                tuple(str(t["name"]) for t in client.list_tools()),
            )
        run = play_team_session(client, spec.scenario_id, spec.seed, tools=known[1])
        # The seat that saw the latest tick holds the episode's final step count.
        return max(
            (played(run.session_id, obs) for obs in run.observations.values()),
            key=lambda p: (p.steps, p.minutes),
        )

    return play


def rollout_command(args: argparse.Namespace) -> int:
    """Run `metasre rollout`; the exit code (1 when an episode could not be graded)."""
    from metasre.agents.rollout import parse_seeds, plan_episodes, run_rollout
    from metasre.agents.sync import SyncClient

    try:
        seeds = parse_seeds(args.seeds)
        if args.agent == "llm":
            _llm_config(args)  # fail before starting anything
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with (
        serving(args.target, max_sessions=max(256, 4 * args.parallel)) as address,
        SyncClient(address, reward_mode=args.reward_mode, admin_token=_admin_token(args)) as client,
    ):
        try:
            scenarios = resolve_scenarios(args.scenarios, list_scenario_ids(client))
            player = make_player(args.agent, client, args)
        except (LookupError, ValueError, RuntimeError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        plan = plan_episodes(scenarios, seeds, args.episodes)
        with _progress(len(plan), args.agent, enabled=not args.no_progress) as tick:
            report = run_rollout(
                client, player, plan, parallel=args.parallel, agent=args.agent, on_result=tick
            )
    if args.json:
        print(json.dumps(dict(report.to_dict(), target=args.target or address), indent=2))
    else:
        print_table(report)
    failed = [r for r in report.results if not r.graded]
    for r in failed[:5]:
        print(f"episode {r.index} ({r.scenario_id} seed {r.seed}): {r.error}", file=sys.stderr)
    return 1 if failed else 0


@contextlib.contextmanager
def _progress(total: int, agent: str, *, enabled: bool) -> Iterator[Callable[[Any], None]]:
    """A rich progress bar on stderr (stdout stays clean for the table and --json)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[resolved]} resolved"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled or not console.is_terminal,
        transient=True,
    )
    task = progress.add_task(f"rollout ({agent})", total=total, resolved=0)
    resolved = 0

    def tick(result: Any) -> None:
        nonlocal resolved
        resolved += bool(result.resolved)
        progress.update(task, advance=1, resolved=resolved)

    with progress:
        yield tick


def print_table(report: RolloutReport) -> None:
    """The per-scenario table, with a total row, on stdout."""
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"rollout: {report.agent}, {len(report.results)} episodes, "
        f"parallel {report.parallel}",
        title_justify="left",
    )
    for name, justify in (
        ("scenario", "left"),
        ("episodes", "right"),
        ("graded", "right"),
        ("resolved", "right"),
        ("grade ± sd", "right"),
        ("steps", "right"),
        ("sim min", "right"),
        ("wall s", "right"),
        ("ep/s", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=name == "scenario")  # type: ignore[arg-type]
    for s in report.summaries:
        if s.scenario_id == "TOTAL":
            table.add_section()
        table.add_row(
            s.scenario_id,
            str(s.episodes),
            str(s.graded),
            f"{s.success_rate:.0%}",
            f"{s.grade_mean:.3f} ± {s.grade_stdev:.3f}",
            f"{s.steps_mean:.1f}",
            f"{s.minutes_mean:.1f}",
            f"{s.wall_seconds:.2f}",
            f"{s.episodes_per_second:.1f}",
            style="bold" if s.scenario_id == "TOTAL" else None,
        )
    Console(width=max(120, Console().width)).print(table)


def llm_command(args: argparse.Namespace) -> int:
    """Run `metasre llm`: one episode, its transcript and its grade; exit 0 once graded."""
    from metasre.agents.llm import LLMEndpointError, LLMPolicy
    from metasre.agents.rollout import EpisodeSpec, solo_player
    from metasre.agents.sync import SyncClient

    try:
        config = _llm_config(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    transcript = _Transcript(quiet=args.json)
    with (
        serving(args.target) as address,
        SyncClient(address, reward_mode=args.reward_mode, admin_token=_admin_token(args)) as client,
    ):
        try:
            (scenario,) = resolve_scenarios([args.scenario], list_scenario_ids(client))
        except (LookupError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        policy = LLMPolicy(config, client.list_tools(), on_message=transcript.show)
        try:
            done: Played = solo_player(lambda seed: policy, "llm")(
                client, EpisodeSpec(0, scenario, args.seed)
            )
        except LLMEndpointError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        answer = client.get_grade(done.session_id)
        client.close_session(done.session_id)
    grade = answer.get("grade", {})
    if args.json:
        out = {
            "scenario_id": scenario,
            "seed": args.seed,
            "model": config.model,
            "stop_reason": policy.stats.stop_reason,
            "requests": policy.stats.requests,
            "malformed_calls": policy.stats.malformed,
            "steps": done.steps,
            "minutes": done.minutes,
            "grade": grade,
            "messages": policy.messages,
        }
        print(json.dumps(out, indent=2))
    else:
        print(
            f"\n{policy.stats.stop_reason}: {policy.stats.requests} requests, "
            f"{policy.stats.malformed} malformed calls, {done.steps} steps, "
            f"{done.minutes:.1f} simulated minutes"
        )
        print(
            f"grade {grade.get('total', 0.0):.3f} (resolved: {grade.get('resolved', False)}"
            f"{', provisional' if not grade.get('final') else ''})"
        )
        for c in grade.get("components", ()):
            print(f"  {c['name']:<15} {c.get('score', 0.0):.2f}  {c.get('detail', '')}")
    return 0 if grade.get("final") else 1


class _Transcript:
    """Prints the conversation as it happens (tool results cut to a few lines)."""

    def __init__(self, *, quiet: bool) -> None:
        self.quiet = quiet
        self.paged = False

    def show(self, message: Mapping[str, Any]) -> None:
        """Print one message of the conversation."""
        if self.quiet or message["role"] == "system":
            return
        if message["role"] == "user":
            label = "[nudge]" if self.paged else "[page]"
            self.paged = True
            print(f"{label} {message['content']}\n")
        elif message["role"] == "assistant":
            if message.get("content"):
                print(f"[model] {str(message['content']).strip()}")
            for c in message.get("tool_calls", ()):
                f = c.get("function", {})
                print(f"[call]  {f.get('name')}({f.get('arguments')})")
        elif message["role"] == "tool":
            lines = str(message["content"]).splitlines() or [""]
            more = f"   ... {len(lines) - 4} more lines" if len(lines) > 4 else ""
            print("\n".join(f"   {line}" for line in lines[:4]) + (f"\n{more}" if more else ""))
        sys.stdout.flush()
