"""The rollout pool on Ray against one client through the directory, on the same fleet.

    python -m bench.ray_pool [--episodes 40] [--per-shard 4] [--rounds 2]

Starts a two-node Ray cluster on 127.0.0.1 (`ray.cluster_utils.Cluster`, one CPU each) and a
`metasre.ray` fleet on it (one shard per node, SQLite stores in a temporary folder), then plays
the same expert episodes (`ExpertPolicy`, graded and closed) two ways, alternating, `--rounds`
times each: `RolloutPool` (a worker beside each shard, `--per-shard` episodes in flight each),
and `run_rollout` from this process through the directory with as many in flight
(`--per-shard` x shards). Prints one Markdown row per run, with the load average.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keep Ray on 127.0.0.1
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

# Ray reads the variables above when it is imported.
import ray
from ray import cluster_utils

from metasre.agents.policies import ExpertPolicy
from metasre.agents.rollout import plan_episodes, run_rollout, solo_player
from metasre.agents.sync import SyncClient
from metasre.ray import RayFleet, RolloutPool

AD = "meta-sre/ad-ranking-crash-v2"


def _expert(seed: int) -> ExpertPolicy:
    return ExpertPolicy()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--per-shard", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    node = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
    started = time.perf_counter()
    cluster = cluster_utils.Cluster(
        initialize_head=True, head_node_args={**node, "include_dashboard": False}
    )
    cluster.add_node(**node)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    print(f"cluster up in {time.perf_counter() - started:.1f} s")
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ray-") as folder:
            t = time.perf_counter()
            fleet = RayFleet.start(
                name="bench", store=str(Path(folder) / "fleet.db"), host="127.0.0.1"
            )
            print(f"fleet of {len(fleet.endpoints)} up in {time.perf_counter() - t:.1f} s")
            player = solo_player(_expert)
            t = time.perf_counter()
            pool = RolloutPool(fleet, player, per_shard=args.per_shard)
            pool.run(plan_episodes([AD], seeds=range(2), episodes=2))  # the workers' warm-up
            print(f"pool up (and warmed) in {time.perf_counter() - t:.1f} s")
            plan = plan_episodes([AD], seeds=range(10), episodes=args.episodes)
            parallel = args.per_shard * len(fleet.endpoints)
            print("| way | round | resolved | wall s | episodes/s | load avg 1 min |")
            print("| --- | ---: | ---: | ---: | ---: | ---: |")
            with SyncClient(fleet.address) as client:
                for r in range(args.rounds):
                    for way in ("RolloutPool", "run_rollout via directory"):
                        if way == "RolloutPool":
                            report = pool.run(plan)
                        else:
                            report = run_rollout(client, player, plan, parallel=parallel)
                        total = report.summaries[-1]
                        resolved = sum(x.resolved for x in report.results)
                        print(
                            f"| {way} | {r + 1} | {resolved}/{len(plan)} "
                            f"| {report.wall_seconds:.1f} | {total.episodes_per_second:.1f} "
                            f"| {os.getloadavg()[0]:.1f} |",
                            flush=True,
                        )
                        errors = sorted({x.error for x in report.results if x.error})
                        if errors:
                            print(f"  (failed: {errors[:3]})", flush=True)
            pool.close()
            fleet.stop(grace_seconds=5.0)
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
