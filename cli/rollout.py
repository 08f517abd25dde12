"""`metasre rollout` (many graded episodes in parallel) and `metasre llm` (one LLM episode).

Both talk to a running server (`--target host:port`) or start one in process on a free port.
Heavy imports wait until a command runs, so `metasre --help` stays quick.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import re
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..agents.players import AGENTS, make_player
from .arguments import (
    add_command,
    add_store_flags,
    non_negative_int,
    positive_int,
    seed_list,
    seeds_text,
)
from .connection import Connection, add_connection_flags
from .errors import ExitCode, UsageError
from .interrupt import LedgeredRun, ledgered_run, on_a_thread
from .progress import progress
from .seat_exports import llm_transcripts_path, save_transcripts
from .serving import local_store

if TYPE_CHECKING:
    from ..agents.llm import LLMConfig
    from ..agents.rollout import EpisodeSpec, RolloutReport
    from ..agents.sync import SyncClient


def add_parsers(sub: Any) -> None:
    """Register `rollout` and `llm` on the command line's subparsers."""
    p = add_command(
        sub,
        "rollout",
        "play many graded episodes in parallel and print a table per scenario",
        "Play many graded episodes in parallel against a server (one started in process "
        "unless --target or $METASRE_TARGET names one) and print a table per scenario. "
        "Ctrl-C stops starting episodes, closes the sessions under way and prints the table "
        "of the finished ones (exit 130).",
    )
    add_connection_flags(p, local="start one in process, recording into --store")
    add_store_flags(p, "a server started in process records every episode")
    _add_reward_mode(p)
    p.add_argument("--agent", choices=AGENTS, default="expert", help="who plays")
    p.add_argument(
        "--scenario",
        action="append",
        dest="scenarios",
        metavar="ID",
        help="scenario id or name; repeat for several (default: all)",
    )
    p.add_argument(
        "--seeds",
        type=seed_list,
        default="0-9",
        metavar="SEEDS",
        help="seeds to play: 7 (seed 7 only), 0-99, 1,5,9 or 0-4,10",
    )
    p.add_argument(
        "--episodes",
        type=positive_int,
        help="episodes in total, cycling over scenarios then seeds (default: one per pair)",
    )
    p.add_argument("--parallel", type=positive_int, default=8, help="episodes at once")
    p.add_argument(
        "--split",
        choices=("train", "test"),
        default=None,
        help="play only the --seeds of each family's split: 'test' for a result to report"
        " (--seeds 0-199 --split test is about 50 seeds a family)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress on stderr (a bar on a terminal, a line per tenth of the run elsewhere)",
    )
    _add_llm(p)
    p.set_defaults(func=rollout_command)

    p = add_command(
        sub,
        "llm",
        "play one episode with an LLM from an OpenAI-compatible endpoint",
        "Play one episode with a model served by any OpenAI-compatible chat-completions "
        "endpoint (vLLM, Ollama, hosted APIs) and print the transcript and the grade. Ctrl-C "
        "closes the session and prints how far it got (exit 130).",
    )
    add_connection_flags(p, local="start one in process, recording into --store")
    add_store_flags(p, "a server started in process records the episode")
    _add_reward_mode(p)
    p.add_argument("--scenario", default="payment-bad-deploy", help="scenario id or name")
    p.add_argument("--seed", type=non_negative_int, default=0, help="the incident's seed")
    p.add_argument("--json", action="store_true", help="print the conversation and grade as JSON")
    p.add_argument(
        "--team",
        action="store_true",
        help="seat a team of models: one per role of a family that declares roles (each seeing "
        "only its view), else three generalists (commander, investigator, fixer); each has its "
        "role's prompt and tools, and teammates talk with send_message",
    )
    p.add_argument(
        "--role-model",
        action="append",
        default=[],
        metavar="ROLE=MODEL",
        help="with --team, the model of one role (repeat; default: --model for every role)",
    )
    p.add_argument(
        "--turn-policy",
        type=str.upper,  # the exports spell it in lower case: either is taken
        choices=("FREE_FOR_ALL", "ROUND_ROBIN", "SIMULTANEOUS"),
        default="FREE_FOR_ALL",
        help="with --team, how the seats take turns",
    )
    p.add_argument(
        "--transcripts",
        metavar="FILE",
        help="append each model seat's conversation, exactly as sent, to this JSONL file "
        "(default: beside the --store of a server started in process, e.g. "
        "metasre.transcripts.jsonl; metasre export --format openai|hf|atif reads it)",
    )
    _add_llm(p)
    p.set_defaults(func=llm_command)


def _add_reward_mode(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reward-mode",
        type=str.upper,  # the exports spell it in lower case: either is taken
        choices=("DENSE", "SPARSE"),
        default="DENSE",
        help="DENSE: shaping as each call applies; SPARSE: the grade only, at the end",
    )


def _add_llm(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("LLM agent (OpenAI-compatible chat completions)")
    g.add_argument(
        "--base-url",
        help="API root with its scheme, e.g. http://127.0.0.1:11434/v1 (env "
        "METASRE_LLM_BASE_URL or OPENAI_BASE_URL)",
    )
    g.add_argument("--model", help="model name (env METASRE_LLM_MODEL)")
    g.add_argument(
        "--api-key",
        help="API key (prefer env METASRE_LLM_API_KEY or OPENAI_API_KEY: flags show in ps)",
    )
    g.add_argument("--max-steps", type=positive_int, default=40, help="chat requests per episode")
    g.add_argument("--temperature", type=float, default=0.0, help="sampling temperature")
    g.add_argument("--llm-timeout", type=float, default=120.0, help="seconds per chat request")


def _llm_config(args: argparse.Namespace) -> LLMConfig:
    """The LLM endpoint from the flags and the environment.

    Raises:
        UsageError: no endpoint or model, or a base URL that is not http(s)://.
    """
    from urllib.parse import urlsplit

    from ..agents.llm import LLMConfig

    try:
        config = LLMConfig.from_env(
            base_url=args.base_url,
            model=args.model,
            api_key=args.api_key,
            max_steps=args.max_steps,
            temperature=args.temperature,
            timeout_seconds=args.llm_timeout,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    url = urlsplit(config.base_url)
    if url.scheme not in ("http", "https") or not url.netloc:
        source = "--base-url" if args.base_url else "the environment's base URL"
        raise UsageError(
            f"{source} {config.base_url!r} is not an http(s) URL; write it with its scheme, "
            f"e.g. http://{config.base_url.split('://')[-1]}"
        )
    return config


def list_scenario_ids(client: SyncClient) -> list[str]:
    """The ids of the scenarios the server offers."""
    return [s["id"] for s in client.list_scenarios()]


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


def seeds_in_split(scenario: str, seeds: list[int], split: str | None) -> list[int]:
    """`seeds`, or those of them in `scenario`'s `split` ('train' or 'test').

    Raises:
        ValueError: the family is not one this build knows the splits of (a server's own), or
            none of the seeds is in the split.
    """
    if split is None:
        return seeds
    from ..simulator import resolve
    from ..simulator.scenarios.splits import in_split

    try:
        mine = in_split(resolve(scenario), seeds, "test" if split == "test" else "train")
    except LookupError:
        raise ValueError(f"{scenario} is not a family this metasre knows the splits of") from None
    if not mine:
        raise ValueError(f"none of the seeds {seeds_text(seeds)} is in {scenario}'s {split} split")
    return mine


def split_plan(
    scenarios: list[str], seeds: list[int], split: str | None, episodes: int | None
) -> list[EpisodeSpec]:
    """The rollout's episodes: over every scenario and seed, or each family's seeds of `split`."""
    from ..agents.rollout import EpisodeSpec as Spec
    from ..agents.rollout import plan_episodes

    if split is None:
        return plan_episodes(scenarios, seeds, episodes)
    plan: list[EpisodeSpec] = []
    for sid in scenarios:
        for spec in plan_episodes([sid], seeds_in_split(sid, seeds, split), episodes):
            plan.append(Spec(len(plan), spec.scenario_id, spec.seed))
    return plan


def rollout_command(args: argparse.Namespace) -> int:
    """Run `metasre rollout`; the exit code (1 when an episode could not be graded)."""
    from ..agents.rollout import run_rollout

    connection = Connection.from_args(args)
    if args.agent == "llm":
        _llm_config(args)  # fail before starting anything
    store = local_store(args, connection)
    with ledgered_run(
        connection,
        "no new episode starts; closing the sessions under way",
        store=store,
        max_sessions=max(256, 4 * args.parallel),
        reward_mode=args.reward_mode,
    ) as run:
        interrupt, client, address = run.interrupt, run.client, run.address
        try:
            scenarios = resolve_scenarios(args.scenarios, list_scenario_ids(client))
        except LookupError as exc:
            raise UsageError(str(exc.args[0])) from None
        player = make_player(args.agent, client, _llm_config(args) if args.agent == "llm" else None)
        try:
            plan = split_plan(scenarios, args.seeds, args.split, args.episodes)
        except ValueError as exc:  # nothing to play (a server offering no scenario)
            raise UsageError(f"{exc}; nothing to roll out") from None
        where = f"recording into {store}" if store else "" if connection.target else "no store"
        print(
            f"rollout: {len(plan)} episodes, {args.agent}, parallel {args.parallel}, on "
            f"{connection.target or f'a server in process at {address}'}"
            + (f", {where}" if where else ""),
            file=sys.stderr,
            flush=True,
        )
        with progress(len(plan), args.agent, enabled=not args.no_progress) as tick:
            report = run_rollout(
                client,
                player,
                plan,
                parallel=args.parallel,
                agent=args.agent,
                on_result=tick,
                stop=lambda: interrupt.requested,
            )
        run.ledger.wait_closed()
    report, cut = run.ledger.cut_short(report)
    if args.json:
        out = dict(report.to_dict(), target=connection.target or address)
        out["store"] = str(store) if store else None
        if interrupt.requested:
            out["interrupted"] = {
                "planned": len(plan),
                "cut_short": len(cut),
                "not_started": len(plan) - len(report.results) - len(cut),
            }
        print(json.dumps(out, indent=2))
    else:
        print_table(report)
    failed = [r for r in report.results if not r.graded]
    for r in failed[:5]:
        print(f"episode {r.index} ({r.scenario_id} seed {r.seed}): {r.error}", file=sys.stderr)
    if store:
        print(
            f"trajectories in {store}: `metasre export --store {store} --out FILE` writes them "
            "as JSONL",
            file=sys.stderr,
        )
    if interrupt.requested:
        print(
            f"interrupted: {len(report.results)} of {len(plan)} episodes finished, "
            f"{len(cut)} cut short (their sessions closed), "
            f"{len(plan) - len(report.results) - len(cut)} not started",
            file=sys.stderr,
        )
        return ExitCode.INTERRUPTED
    return ExitCode.FAILED if failed else ExitCode.OK


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


def _role_configs(args: argparse.Namespace, config: LLMConfig) -> dict[str, LLMConfig]:
    """--role-model ROLE=MODEL on top of the shared config; a UsageError names a bad one."""
    from dataclasses import replace

    from ..agents.policies.team import ROLES
    from ..simulator import resolve

    # A family that declares roles seats them instead of the three generalists, so only its
    # roles can be named (a generalist's model would be ignored: issue 28).
    names = list(ROLES)
    with contextlib.suppress(LookupError):  # an unknown scenario is reported when it is used
        names = [r.name for r in resolve(args.scenario).spec(args.seed).roles] or names
    configs = dict.fromkeys(names, config)
    for item in args.role_model:
        role, sep, model = item.partition("=")
        if not sep or not model.strip():
            raise UsageError(f"--role-model {item!r}: write ROLE=MODEL, e.g. fixer=qwen2.5:7b")
        if role not in configs:
            raise UsageError(
                f"--role-model {item!r}: {args.scenario} has no role {role!r}; its roles are "
                f"{', '.join(names)}"
            )
        configs[role] = replace(config, model=model.strip())
    return configs


def llm_command(args: argparse.Namespace) -> int:
    """Run `metasre llm`: one episode, its transcript and its grade; exit 0 once graded."""
    from ..agents.llm import LLMPolicy
    from ..agents.rollout import EpisodeSpec, solo_player

    config = _llm_config(args)
    if args.role_model and not args.team:
        raise UsageError("--role-model needs --team (it names the model of one team role)")
    if args.team:
        return _llm_team_command(args, _role_configs(args, config))
    transcript = _Transcript(quiet=args.json)
    with _llm_client(args) as (run, scenario):
        client = run.client
        policy = LLMPolicy(config, client.list_tools(), on_message=transcript.show)
        done = on_a_thread(
            lambda: solo_player(lambda seed: policy, "llm")(
                client, EpisodeSpec(0, scenario, args.seed)
            ),
            run.interrupt,
        )
        if done is None:
            run.ledger.wait_closed()
            print(
                f"interrupted: the session is closed after {policy.stats.requests} chat "
                "requests; no grade",
                file=sys.stderr,
            )
            return ExitCode.INTERRUPTED
        answer = client.get_grade(done.session_id)
        episode = int(client.get_session(done.session_id)["episode"])
        client.close_session(done.session_id)
    save_transcripts(
        llm_transcripts_path(args),
        {"llm": policy},
        session_id=done.session_id,
        episode=episode,
        scenario_id=scenario,
        seed=args.seed,
    )
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
        _print_grade(grade)
    return ExitCode.OK if grade.get("final") else ExitCode.FAILED


@contextlib.contextmanager
def _llm_client(args: argparse.Namespace) -> Iterator[tuple[LedgeredRun, str]]:
    """What `metasre llm` and `llm --team` play in, and the scenario resolved."""
    connection = Connection.from_args(args)
    store = local_store(args, connection)
    with ledgered_run(
        connection, "closing the session", store=store, reward_mode=args.reward_mode
    ) as run:
        try:
            (scenario,) = resolve_scenarios([args.scenario], list_scenario_ids(run.client))
        except LookupError as exc:
            raise UsageError(str(exc.args[0])) from None
        yield run, scenario
    if store is not None:  # as rollout and demo say it
        print(
            f"trajectory stored in {store}: `metasre export --store {store} --out FILE` writes "
            "it as JSONL",
            file=sys.stderr,
        )


def _llm_team_command(args: argparse.Namespace, configs: Mapping[str, LLMConfig]) -> int:
    """`metasre llm --team`: three model seats in one session, their transcripts, the grade."""
    from ..agents.llm_team import play_llm_team

    lock = threading.Lock()
    transcripts: dict[str, _Transcript] = {}

    def show(role: str, message: Mapping[str, Any]) -> None:
        with lock:  # three threads print: one message at a time, each with its role
            transcripts.setdefault(role, _Transcript(quiet=args.json, label=role)).show(message)

    with _llm_client(args) as (played, scenario):
        client = played.client
        run = on_a_thread(
            lambda: play_llm_team(
                client, scenario, args.seed, configs, turn_policy=args.turn_policy, on_message=show
            ),
            played.interrupt,
        )
        if run is None:
            played.ledger.wait_closed()
            print("interrupted: the session is closed; no grade", file=sys.stderr)
            return ExitCode.INTERRUPTED
        answer = client.get_grade(run.session_id)
        episode = int(client.get_session(run.session_id)["episode"])
        client.close_session(run.session_id)
    save_transcripts(
        llm_transcripts_path(args),
        run.policies,
        session_id=run.session_id,
        episode=episode,
        scenario_id=scenario,
        seed=args.seed,
    )
    grade = answer.get("grade", {})
    if args.json:
        out = {
            "scenario_id": scenario,
            "seed": args.seed,
            "turn_policy": args.turn_policy,
            "grade": grade,
            "agent_rewards": answer.get("agent_rewards", {}),
            "roles": {
                role: {
                    "model": p.config.model,
                    "stop_reason": p.stats.stop_reason,
                    "requests": p.stats.requests,
                    "malformed_calls": p.stats.malformed,
                    "messages": p.messages,
                }
                for role, p in run.policies.items()
            },
        }
        print(json.dumps(out, indent=2))
    else:
        for role, p in run.policies.items():
            print(
                f"{role} ({p.config.model}): {p.stats.stop_reason}, "
                f"{p.stats.requests} requests, {p.stats.malformed} malformed calls"
            )
        _print_grade(grade)
    return ExitCode.OK if grade.get("final") else ExitCode.FAILED


def _print_grade(grade: Mapping[str, Any]) -> None:
    print(
        f"grade {grade.get('total', 0.0):.3f} (resolved: {grade.get('resolved', False)}"
        f"{', provisional' if not grade.get('final') else ''})"
    )
    for c in grade.get("components", ()):
        print(f"  {c['name']:<15} {c.get('score', 0.0):.2f}  {c.get('detail', '')}")


class _Transcript:
    """Prints the conversation as it happens (tool results cut to a few lines)."""

    def __init__(self, *, quiet: bool, label: str = "") -> None:
        self.quiet = quiet
        self.paged = False
        self.who = f"{label} " if label else ""
        """A team seat's role, before each of its lines."""

    def show(self, message: Mapping[str, Any]) -> None:
        """Print one message of the conversation."""
        if self.quiet or message["role"] == "system":
            return
        who = self.who
        if message["role"] == "user":
            text = str(message["content"])
            label = (
                "[page]"
                if not self.paged
                else "[heard]"
                if text.startswith("Message from")
                else "[nudge]"
            )
            self.paged = True
            print(f"{who}{label} {text}\n")
        elif message["role"] == "assistant":
            if message.get("content"):
                print(f"{who}[model] {str(message['content']).strip()}")
            for c in message.get("tool_calls", ()):
                f = c.get("function", {})
                print(f"{who}[call]  {f.get('name')}({f.get('arguments')})")
        elif message["role"] == "tool":
            lines = str(message["content"]).splitlines() or [""]
            more = f"   ... {len(lines) - 4} more lines" if len(lines) > 4 else ""
            print(
                "\n".join(f"{who}   {line}" for line in lines[:4]) + (f"\n{more}" if more else "")
            )
        sys.stdout.flush()
