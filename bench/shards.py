"""One server against `--workers N` on this machine: server CPU per graded episode, throughput.

    python -m bench.shards [--episodes 24] [--concurrency 8] [--workers 2]

Starts `metasre serve` (one process), then `metasre serve --workers N`, each with a SQLite
store in a temporary folder, and plays the same expert episodes on each through the SDK from
this process (the light client: one asyncio loop, the reference solution's calls). Server CPU
is the whole process tree's (supervisor, shards, their sandbox helpers, and the children they
reaped), read from /proc before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from metasre.agents.client import MetasreClient
from metasre.service.process import start_serve, stop_child
from metasre.simulator import Episode

AD = "meta-sre/ad-ranking-crash-v2"
TICK = os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def _cpu(pid: int) -> float:
    total = 0
    for p in _tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / TICK


async def _episode(client: MetasreClient, seed: int, steps: list[tuple[str, Any]]) -> bool:
    session = await client.create_session(AD, seed=seed)
    async with client.agent(session.id, session.tokens["agent"]) as agent:
        for tool, args in steps:
            await agent.call(tool, args)
    grade = await client.get_grade(session.id)
    await client.close_session(session.id)
    return bool(grade["grade"].get("resolved"))


async def _run(workers: int, episodes: int, concurrency: int) -> dict[str, float]:
    seeds = [s % 10 for s in range(episodes)]
    plans = {s: [(x.tool, dict(x.args)) for x in Episode.make(AD, s).instance.spec.solution]
             for s in set(seeds)}  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        extra = ("--workers", str(workers)) if workers > 1 else ()
        proc, address = await start_serve(
            "--port", "0", "--store", str(Path(folder) / "b.db"), *extra,
            stderr=asyncio.subprocess.DEVNULL, cwd=folder, timeout=180.0,
        )  # fmt: skip
        try:
            async with MetasreClient(address) as client:
                # warm every shard's renderer and sandbox before measuring
                await asyncio.gather(*(_episode(client, s, plans[s]) for s in range(2 * workers)))
                gate = asyncio.Semaphore(concurrency)

                async def one(seed: int) -> bool:
                    async with gate:
                        return await _episode(client, seed, plans[seed])

                cpu0, t0 = _cpu(proc.pid), time.perf_counter()
                resolved = await asyncio.gather(*(one(s) for s in seeds))
                wall, cpu = time.perf_counter() - t0, _cpu(proc.pid) - cpu0
        finally:
            await stop_child(proc)
    return {
        "workers": workers,
        "episodes": episodes,
        "resolved": sum(resolved),
        "wall_s": wall,
        "episodes_per_s": episodes / wall,
        "server_cpu_ms_per_episode": 1000 * cpu / episodes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=24)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    for workers in (1, args.workers):
        row = asyncio.run(_run(workers, args.episodes, args.concurrency))
        print(
            f"workers {row['workers']}: {row['resolved']}/{row['episodes']} resolved, "
            f"{row['wall_s']:.1f} s, {row['episodes_per_s']:.2f} episodes/s, server CPU "
            f"{row['server_cpu_ms_per_episode']:.0f} ms per graded episode",
            flush=True,
        )


if __name__ == "__main__":
    main()
