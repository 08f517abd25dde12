"""Parallel rollouts over the wire: many graded episodes, a summary per scenario.

Sync policies play on worker threads; every worker's calls go through one `SyncClient` (one
event-loop thread, one channel), so a rollout costs one connection however wide it runs:

    with SyncClient("127.0.0.1:50051") as client:
        plan = plan_episodes(["meta-sre/payment-bad-deploy-v2"], seeds=range(10), episodes=20)
        report = run_rollout(client, solo_player(lambda seed: ExpertPolicy()), plan, parallel=8)
    print(report.summaries[0].success_rate)
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from .policies.base import Policy, ToolReply
from .policies.companions import Companion
from .sync import SyncClient, WireCaller


@dataclass(frozen=True, slots=True)
class EpisodeSpec:
    """One episode to play."""

    index: int
    """Position in the plan, from 0."""
    scenario_id: str
    seed: int


@dataclass(frozen=True, slots=True)
class Played:
    """What a player reports about the episode it just played."""

    session_id: str
    steps: int
    """Calls the session applied (refused calls are not steps)."""
    minutes: float
    """Simulated minutes from the page to the last call."""


class EpisodePlayer(Protocol):
    """Creates a session for `spec`, plays it to the end, and says how it went."""

    def __call__(self, client: SyncClient, spec: EpisodeSpec) -> Played:
        """Play one episode through `client` (called from many threads at once)."""
        ...


@dataclass(frozen=True, slots=True)
class EpisodeResult:
    """One played episode and its grade."""

    index: int
    scenario_id: str
    seed: int
    session_id: str
    graded: bool
    """True when the episode ended and the server returned its final grade."""
    resolved: bool
    grade: float
    steps: int
    minutes: float
    """Simulated minutes."""
    wall_seconds: float
    """Real time from creating the session to its grade."""
    started: float
    """Start, in seconds since the rollout began."""
    components: Mapping[str, float] = field(default_factory=dict)
    """Grade component name -> its score."""
    error: str = ""
    """Why the episode could not be played or graded (empty when it was)."""
    details: Any = None
    """What `run_rollout`'s `collect` read from the session before it closed, if asked."""


@dataclass(frozen=True, slots=True)
class ScenarioSummary:
    """The figures of one scenario's episodes (or of all of them, as `TOTAL`)."""

    scenario_id: str
    episodes: int
    graded: int
    success_rate: float
    """Share of the episodes whose grade says resolved."""
    grade_mean: float
    grade_stdev: float
    """Population standard deviation of the grades (0 for one episode)."""
    steps_mean: float
    minutes_mean: float
    """Mean simulated minutes."""
    wall_seconds: float
    """From the first of these episodes starting to the last one ending."""
    episodes_per_second: float


@dataclass(frozen=True, slots=True)
class RolloutReport:
    """Every episode, and the summary per scenario plus a total."""

    agent: str
    parallel: int
    wall_seconds: float
    results: Sequence[EpisodeResult]
    summaries: Sequence[ScenarioSummary]
    """One per scenario in plan order, then `TOTAL`."""

    @property
    def total(self) -> ScenarioSummary:
        """The summary over all episodes."""
        return self.summaries[-1]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "agent": self.agent,
            "parallel": self.parallel,
            "episodes": len(self.results),
            "wall_seconds": self.wall_seconds,
            "episodes_per_second": self.total.episodes_per_second,
            "scenarios": [asdict(s) for s in self.summaries[:-1]],
            "total": asdict(self.total),
            "results": [asdict(r) for r in self.results],
        }


def plan_episodes(
    scenario_ids: Sequence[str], seeds: Sequence[int], episodes: int | None = None
) -> list[EpisodeSpec]:
    """Episodes over every (scenario, seed) pair, cycling when `episodes` asks for more.

    Pairs are taken seed by seed across the scenarios, so a short plan still covers every
    scenario; the plan is then ordered scenario by scenario, which makes each scenario's wall
    time mean something.
    """
    if not scenario_ids or not seeds:
        raise ValueError("a rollout needs at least one scenario and one seed")
    n = len(scenario_ids) * len(seeds) if episodes is None else episodes
    if n < 1:
        raise ValueError(f"episodes must be at least 1, got {n}")
    pairs = [
        (i % len(scenario_ids), seeds[(i // len(scenario_ids)) % len(seeds)]) for i in range(n)
    ]
    pairs.sort(key=lambda p: p[0])  # stable: seeds keep their order within a scenario
    return [EpisodeSpec(i, scenario_ids[s], seed) for i, (s, seed) in enumerate(pairs)]


def solo_player(
    make_policy: Callable[[int], Policy], agent_id: str = "agent", **session_options: Any
) -> EpisodePlayer:
    """A player that seats one policy (made per episode from the seed) in its own session.

    `session_options`: more arguments of `create_session` (turn_policy, attribution, ...).
    """

    def play(client: SyncClient, spec: EpisodeSpec) -> Played:
        session = client.create_session(
            spec.scenario_id, seed=spec.seed, seats=[agent_id], **session_options
        )
        agent = client.agent(session.id, session.tokens[agent_id])
        try:
            make_policy(spec.seed).play(WireCaller(agent), agent.observation)
            return played(session.id, agent.observation)
        finally:
            agent.close()

    return play


def pair_player(
    make_worker: Callable[[int], Policy],
    companion: str,
    make_companion: Callable[[], Companion],
    **session_options: Any,
) -> EpisodePlayer:
    """A player that seats a worker and a companion (`metasre.agents.policies.companions`).

    The companion (seat `companion`) acts first, then after each of the worker's calls, on
    its own seat, with what its stream shows of the worker's call (its full view shows every
    teammate's arguments and results): an order fixed by the worker's calls, so an episode
    plays the same every time.
    """

    def play(client: SyncClient, spec: EpisodeSpec) -> Played:
        seats = ["worker", companion]
        session = client.create_session(
            spec.scenario_id, seed=spec.seed, seats=seats, **session_options
        )
        worker = client.agent(session.id, session.tokens["worker"])
        other = client.agent(session.id, session.tokens[companion])
        try:
            mine, theirs = WireCaller(worker), WireCaller(other)
            beside = make_companion()
            beside.start(theirs, other.observation)

            def call(tool: str, args: Mapping[str, Any]) -> ToolReply:
                reply = mine(tool, args)
                if not reply.done:
                    beside.after(theirs, tool, args, reply)
                return reply

            make_worker(spec.seed).play(call, worker.observation)
            return played(session.id, worker.observation)
        finally:
            worker.close()
            other.close()

    return play


def played(session_id: str, observation: Mapping[str, Any]) -> Played:
    """`Played` from the latest observation a seat received."""
    budget = int(observation.get("step_budget", 0))
    return Played(
        session_id,
        budget - int(observation.get("steps_left", budget)),
        float(observation.get("minute", 0.0)),
    )


def run_rollout(
    client: SyncClient,
    player: EpisodePlayer,
    plan: Sequence[EpisodeSpec],
    *,
    parallel: int = 8,
    agent: str = "",
    on_result: Callable[[EpisodeResult], None] | None = None,
    close_sessions: bool = True,
    stop: Callable[[], bool] | None = None,
    collect: Callable[[SyncClient, str], Any] | None = None,
) -> RolloutReport:
    """Play `plan` with up to `parallel` episodes at once and summarise it.

    An episode that fails (the server refuses, the policy raises) is recorded with its error and
    the rollout goes on. `on_result` is called from the calling thread, once per episode, in
    completion order. Once `stop()` is true no further episode starts: the report covers the
    episodes that did (a Ctrl-C's partial table). `collect(client, session_id)` runs after the
    grade and before the session closes (to read its trajectory); what it returns is the
    result's `details`.
    """
    origin = time.perf_counter()
    results: list[EpisodeResult] = []
    for result in iter_rollouts(
        client,
        player,
        plan,
        parallel=parallel,
        close_sessions=close_sessions,
        stop=stop,
        collect=collect,
        origin=origin,
    ):
        results.append(result)
        if on_result is not None:
            on_result(result)
    wall = time.perf_counter() - origin
    results.sort(key=lambda r: r.index)
    order = list(dict.fromkeys(s.scenario_id for s in plan))
    summaries = [
        summarise(sid, [r for r in results if r.scenario_id == sid])
        for sid in order
        if any(r.scenario_id == sid for r in results)  # a stopped run may not reach them all
    ]
    summaries.append(summarise("TOTAL", results, wall))
    return RolloutReport(agent, parallel, wall, results, summaries)


def iter_rollouts(
    client: SyncClient,
    player: EpisodePlayer,
    specs: Iterable[EpisodeSpec],
    *,
    parallel: int = 8,
    close_sessions: bool = True,
    stop: Callable[[], bool] | None = None,
    collect: Callable[[SyncClient, str], Any] | None = None,
    origin: float | None = None,
) -> Iterator[EpisodeResult]:
    """Each episode of `specs` as it finishes: a trainer's rollout pool, with back-pressure.

    Up to `parallel` episodes play at once. `specs` is read lazily (it may be endless), and a
    new episode starts only when the caller has taken a finished one: a trainer busy with a
    batch holds at most `parallel` episodes, played and waiting, never a growing queue.
    Closing the generator (`contextlib.closing`, as below, so that it happens at the `break`
    and not whenever it is collected) waits for the episodes in flight, closes their sessions
    and starts no more. `stop`, `collect` and `close_sessions` are `run_rollout`'s.

        specs = (EpisodeSpec(i, "payment-bad-deploy", seed=i) for i in itertools.count())
        pool = iter_rollouts(client, solo_player(make_policy), specs, parallel=16)
        with contextlib.closing(pool):
            for result in pool:
                if trainer.add(result):
                    break
    """
    if parallel < 1:
        raise ValueError(f"parallel must be at least 1, got {parallel}")
    start = time.perf_counter() if origin is None else origin
    queue = iter(specs)
    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="rollout") as pool:
        running: set[Future[EpisodeResult]] = set()

        def fill() -> None:
            while len(running) < parallel and not (stop is not None and stop()):
                spec = next(queue, None)
                if spec is None:
                    return
                running.add(
                    pool.submit(play_episode, client, player, spec, start, close_sessions, collect)
                )

        fill()
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: f.result().index):
                running.discard(future)
                yield future.result()
            fill()


def play_episode(
    client: SyncClient,
    player: EpisodePlayer,
    spec: EpisodeSpec,
    origin: float,
    close_sessions: bool,
    collect: Callable[[SyncClient, str], Any] | None,
) -> EpisodeResult:
    """Play and grade one episode; a failure is the result's `error`, never raised.

    `origin` is the `time.perf_counter()` the result's `started` counts from; `collect` and
    `close_sessions` are `run_rollout`'s.
    """
    start = time.perf_counter()
    session_id, steps, minutes, details = "", 0, 0.0, None
    try:
        p = player(client, spec)
        session_id, steps, minutes = p.session_id, p.steps, p.minutes
        answer = client.get_grade(session_id)
        grade = answer.get("grade", {})
        graded = bool(grade.get("final"))
        error = "" if graded else "the episode did not end: its grade is provisional"
        if collect is not None:
            details = collect(client, session_id)
    except Exception as exc:  # one episode's failure is a row in the table, not a crash
        grade, graded, error = {}, False, f"{type(exc).__name__}: {exc}"
    finally:
        if close_sessions and session_id:
            # Already closed, or the server is going away: nothing left to free.
            with contextlib.suppress(Exception):
                client.close_session(session_id)
    end = time.perf_counter()
    return EpisodeResult(
        index=spec.index,
        scenario_id=spec.scenario_id,
        seed=spec.seed,
        session_id=session_id,
        graded=graded,
        resolved=bool(grade.get("resolved")),
        grade=float(grade.get("total", 0.0)),
        steps=steps,
        minutes=minutes,
        wall_seconds=end - start,
        started=start - origin,
        components={
            str(c["name"]): float(c.get("score", 0.0)) for c in grade.get("components", ())
        },
        error=error,
        details=details,
    )


def summarise(
    scenario_id: str, results: Iterable[EpisodeResult], wall: float | None = None
) -> ScenarioSummary:
    """The summary of `results`; `wall` overrides the span they cover."""
    rows = list(results)
    if not rows:
        return ScenarioSummary(scenario_id, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    grades = [r.grade for r in rows]
    span = (
        wall
        if wall is not None
        else max(r.started + r.wall_seconds for r in rows) - min(r.started for r in rows)
    )
    return ScenarioSummary(
        scenario_id=scenario_id,
        episodes=len(rows),
        graded=sum(r.graded for r in rows),
        success_rate=sum(r.resolved for r in rows) / len(rows),
        grade_mean=statistics.fmean(grades),
        grade_stdev=statistics.pstdev(grades),
        steps_mean=statistics.fmean(r.steps for r in rows),
        minutes_mean=statistics.fmean(r.minutes for r in rows),
        wall_seconds=span,
        episodes_per_second=len(rows) / span if span > 0 else 0.0,
    )


__all__ = [
    "EpisodePlayer",
    "EpisodeResult",
    "EpisodeSpec",
    "Played",
    "RolloutReport",
    "ScenarioSummary",
    "iter_rollouts",
    "pair_player",
    "plan_episodes",
    "play_episode",
    "played",
    "run_rollout",
    "solo_player",
    "summarise",
]
