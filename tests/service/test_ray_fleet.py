"""`metasre.ray` on a real two-node Ray cluster (`ray.cluster_utils.Cluster`) on loopback.

One test, for its cost (a cluster starts in ~7 s and takes ~650 MiB): a fleet with one shard
per node over a shared PostgreSQL store, a rollout pool spreading episodes over both shards,
and one shard SIGKILLed while every episode is halfway: each episode still ends with the grade
an uninterrupted run gives, and the slot's process was started again once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metasre.agents.rollout import EpisodeSpec, played
from metasre.agents.sync import SyncClient
from metasre.simulator import Episode

from .conftest import AD, TIMEOUT

# Ray reads this when it is imported, in this process and in the nodes it starts: without it
# Ray binds the machine's routable address instead of 127.0.0.1 (ray/_private/ray_constants.py).
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[dev]'")
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = pytest.mark.xdist_group("fleet")

SEED = 3
OBJECT_STORE_BYTES = 80 * 1024 * 1024
"""Each node's object store: the pool moves a few small results, nothing more."""


def _children() -> set[int]:
    """This process's child processes now (Ray's head starts its daemons as ours)."""
    out: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        out |= {int(p) for p in (task / "children").read_text().split()}
    return out


def _start(cluster: Any, node: dict[str, Any]) -> None:
    cluster.add_node(**node, include_dashboard=False)  # the first node is the head
    cluster.add_node(**node)
    cluster.wait_for_nodes()


@pytest.fixture
def two_nodes() -> Iterator[Any]:
    """A head and one more node on 127.0.0.1, and this process connected as the driver.

    Whatever Ray processes this fixture started are stopped at the end, and those only: the
    cluster's nodes, and any daemon of a node that failed halfway through its start (which the
    cluster does not list). A start that fails is tried once more (Ray picks its ports while
    other tests bind theirs), and the second failure fails the test.
    """
    node = {"num_cpus": 1, "object_store_memory": OBJECT_STORE_BYTES}
    before = _children()
    cluster = cluster_utils.Cluster()
    try:
        try:
            _start(cluster, node)
        except Exception:
            cluster.shutdown()
            _stop_ray_children(before)
            cluster = cluster_utils.Cluster()
            _start(cluster, node)
        assert cluster.address.startswith("127.0.0.1:"), cluster.address
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            yield cluster
        finally:
            ray.shutdown()
    finally:
        cluster.shutdown()  # the processes this cluster started, and no other
        _stop_ray_children(before)


def _stop_ray_children(before: set[int]) -> None:
    """SIGKILL the Ray daemons among this process's children that were not there `before`."""
    for pid in _children() - before:
        with contextlib.suppress(OSError):
            if b"/ray/" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)


@ray.remote(num_cpus=0)
class Gate:
    """Holds the episodes halfway until the test has killed a shard."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.arrivals = 0
        self.changed = asyncio.Condition()

    async def arrive(self) -> None:
        async with self.changed:
            self.arrivals += 1
            self.changed.notify_all()
        await self.opened.wait()

    async def wait_arrivals(self, n: int) -> int:
        async with self.changed:
            await self.changed.wait_for(lambda: self.arrivals >= n)
        return self.arrivals

    def open(self) -> None:
        self.opened.set()


def _solution() -> list[tuple[str, dict[str, Any]]]:
    return [(s.tool, dict(s.args)) for s in Episode.make(AD, SEED).instance.spec.solution]


def _player(gate: Any | None) -> Any:
    """The reference fix, played halfway, then (with a gate) held until the gate opens."""
    steps = _solution()
    half = len(steps) // 2

    def play(client: SyncClient, spec: EpisodeSpec) -> Any:
        session = client.create_session(spec.scenario_id, seed=spec.seed, seats=["agent"])
        agent = client.agent(session.id, session.tokens["agent"])
        try:
            for tool, args in steps[:half]:
                agent.call(tool, args)
            if gate is not None:
                ray.get(gate.arrive.remote())
            for tool, args in steps[half:]:
                agent.call(tool, args)
            return played(session.id, agent.observation)
        finally:
            agent.close()

    return play


def _graded(result: Any) -> tuple[Any, ...]:
    return (result.graded, result.resolved, result.grade, sorted(result.components.items()))


def test_a_shard_killed_during_a_ray_rollout_costs_no_episode_its_grade(
    two_nodes: Any, postgres_cluster: Any
) -> None:
    from metasre.ray import RayFleet, RolloutPool

    fleet = RayFleet.start(
        name="metasre-test", store=postgres_cluster.new_database(), host="127.0.0.1"
    )
    try:
        assert len(fleet.endpoints) == 2  # one shard per node
        assert len(set(ray.get([s.node_id.remote() for s in fleet.shards]))) == 2
        # published: a task elsewhere in the cluster finds the fleet by its name
        found = ray.get(
            ray.remote(num_cpus=0)(lambda: RayFleet.connect("metasre-test").address).remote()
        )
        assert found == fleet.address

        with SyncClient(fleet.address) as client:
            info = client.run(client.client.server_info())
            assert [s["endpoint"] for s in info["shards"]] == list(fleet.endpoints)

        plain = RolloutPool(fleet, _player(None), per_shard=1)
        try:
            uninterrupted = [_graded(r) for r in plain.results([EpisodeSpec(0, AD, SEED)])]
        finally:
            plain.close()
        assert uninterrupted[0][0], "the reference fix must end the episode with a final grade"

        gate = Gate.remote()
        pool = RolloutPool(fleet, _player(gate), per_shard=2)
        results: list[Any] = []
        failed: list[BaseException] = []

        def consume() -> None:
            try:
                results.extend(pool.results(EpisodeSpec(i, AD, SEED) for i in range(4)))
            except BaseException as exc:  # re-raised below, in the test's thread
                failed.append(exc)

        rollout = threading.Thread(target=consume)
        rollout.start()
        try:
            # all four halfway: two on each shard (the pool's back-pressure spreads them)
            assert ray.get(gate.wait_arrivals.remote(4), timeout=TIMEOUT * 3) == 4
            victim = 1
            os.kill(fleet.shard_pids()[victim], signal.SIGKILL)
        finally:
            gate.open.remote()
            rollout.join(TIMEOUT * 6)
        pool.close()
        assert not rollout.is_alive() and not failed, failed
        assert sorted(r.index for r in results) == [0, 1, 2, 3]
        assert all(not r.error for r in results), [r.error for r in results]
        slots = sorted(int(r.session_id.rsplit("-s", 1)[1]) for r in results)
        assert slots == [0, 0, 1, 1]
        assert [_graded(r) for r in results] == uninterrupted * 4
        assert fleet.restarts() == [0, 1]
        with SyncClient(fleet.address) as client:
            shards = client.run(client.client.server_info())["shards"]
        assert [s.get("restarts", 0) for s in shards] == [0, 1]
    finally:
        with contextlib.suppress(Exception):
            fleet.stop(grace_seconds=5.0)
