"""A rollout pool on a fleet on Ray: episodes spread over the shards, with back-pressure.

One rollout worker per shard runs on the shard's node and plays its episodes against that
shard (gRPC on the node, no actor call per tool call). The pool hands each episode to the
worker with the fewest in flight, at most `per_shard` each: a trainer that stops taking results
holds at most `per_shard` x shards episodes, played and waiting, never a growing queue. A shard
that dies holds up its own worker's episodes only while its slot's new process rebuilds them
(the SDK waits for it and resumes the seats by itself); the others play on. Each worker creates
its sessions on its own shard under an owner token of its own: the owner quota that counts is
the shard's `max_sessions_per_owner`, which must allow `per_shard`.

    fleet = RayFleet.connect()                     # inside the trainer's Ray job
    pool = RolloutPool(fleet, solo_player(make_policy), per_shard=8)
    with contextlib.closing(pool):
        for result in pool.results(specs):        # as they finish
            trainer.add(result)
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Iterable, Iterator, Sequence

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from ..agents.rollout import (
    EpisodePlayer,
    EpisodeResult,
    EpisodeSpec,
    RolloutReport,
    play_episode,
    summarise,
)
from ..agents.sync import SyncClient
from .fleet import RayFleet


@ray.remote(num_cpus=0, max_restarts=0)
class RolloutWorker:
    """Plays episodes against the shard at `endpoint`, several at once (one thread each).

    Args:
        endpoint: The shard's host:port.
        player: Creates a session, plays it, says how it went (`metasre.agents.rollout`).
        close_sessions: Close each session once graded.
    """

    def __init__(self, endpoint: str, player: EpisodePlayer, close_sessions: bool) -> None:
        self.client = SyncClient(endpoint)
        self.player = player
        self.close_sessions = close_sessions

    def play(self, spec: EpisodeSpec) -> EpisodeResult:
        """Play and grade one episode; a failure is the result's `error`, never raised."""
        return play_episode(
            self.client, self.player, spec, time.perf_counter(), self.close_sessions, None
        )


class RolloutPool:
    """Episodes played on `fleet`'s shards, at most `per_shard` at once on each.

    Args:
        fleet: The fleet (`RayFleet.start` or `RayFleet.connect`).
        player: Creates a session, plays it and says how it went; it is pickled to the
            workers (a closure over a policy factory is fine).
        per_shard: Episodes in flight on one shard at most.
        close_sessions: Close each session once graded.
    """

    def __init__(
        self,
        fleet: RayFleet,
        player: EpisodePlayer,
        *,
        per_shard: int = 4,
        close_sessions: bool = True,
    ) -> None:
        if per_shard < 1:
            raise ValueError(f"per_shard must be at least 1, got {per_shard}")
        self.per_shard = per_shard
        nodes = ray.get([s.node_id.remote() for s in fleet.shards])
        self.workers = [
            RolloutWorker.options(  # type: ignore[attr-defined]
                max_concurrency=per_shard,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=True),
            ).remote(endpoint, player, close_sessions)
            for endpoint, node in zip(fleet.endpoints, nodes, strict=True)
        ]

    def results(self, specs: Iterable[EpisodeSpec]) -> Iterator[EpisodeResult]:
        """Each episode of `specs` as it finishes, in completion order.

        `specs` is read lazily (it may be endless): a new episode starts only when a shard has
        a free place and the caller has taken a finished one. `started` counts from the first
        call of this generator.
        """
        origin = time.perf_counter()
        queue = iter(specs)
        in_flight: dict[ray.ObjectRef[EpisodeResult], tuple[int, float]] = {}
        load = [0] * len(self.workers)
        turn = itertools.count()

        def fill() -> None:
            while True:
                free = [w for w in range(len(self.workers)) if load[w] < self.per_shard]
                if not free:
                    return
                spec = next(queue, None)
                if spec is None:
                    return
                # the least loaded shard; among equals, take turns
                start = next(turn) % len(self.workers)
                worker = min(free, key=lambda w: (load[w], (w - start) % len(self.workers)))
                ref = self.workers[worker].play.remote(spec)
                in_flight[ref] = (worker, time.perf_counter() - origin)
                load[worker] += 1

        fill()
        while in_flight:
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                worker, started = in_flight.pop(ref)
                load[worker] -= 1
                result: EpisodeResult = ray.get(ref)
                yield dataclasses.replace(result, started=started)
            fill()

    def run(self, plan: Sequence[EpisodeSpec], agent: str = "") -> RolloutReport:
        """Play `plan` and summarise it, as `metasre.agents.rollout.run_rollout` does."""
        origin = time.perf_counter()
        results = sorted(self.results(plan), key=lambda r: r.index)
        wall = time.perf_counter() - origin
        order = list(dict.fromkeys(s.scenario_id for s in plan))
        summaries = [summarise(sid, [r for r in results if r.scenario_id == sid]) for sid in order]
        summaries.append(summarise("TOTAL", results, wall))
        return RolloutReport(agent, self.per_shard * len(self.workers), wall, results, summaries)

    def close(self) -> None:
        """End the workers (episodes in flight are abandoned; their sessions idle out)."""
        for worker in self.workers:
            ray.kill(worker)
