"""Families beside today's nine: rendering a new seed, and what an idle session holds.

Run: python -m bench.bench_families [--base REV] [--seeds N]. The base's scenario folders
(default: 7e10fe8, the nine hand-written incidents before families) are taken out of git into a
temporary folder and rendered by this tree's engine, interleaved with the families, so both
sides meet the same machine at the same moments. Rendering is measured cold: every seed is one
no process rendered before (seeds 1000 and up), with the loader's caches emptied, as a server
renders the first session of a seed (after start-up, the heap frozen as a server's GcFreezer
keeps it). Memory is per idle episode (made, nothing called), one new
seed each (the worst case: no rendering shared) and seeds 0-4 over and over (as rollouts do).
"""

from __future__ import annotations

import argparse
import gc
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from metasre.simulator import Episode, resolve, scenario_ids
from metasre.simulator.scenarios import loader
from metasre.simulator.scenarios.loader import load_instance
from metasre.simulator.scenarios.registry import part_ids

ROOT = Path(__file__).resolve().parent.parent


def _extract(rev: str, into: Path) -> list[Path]:
    """The base's scenario folders (not its topologies: those are shared and unchanged)."""
    blob = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "simulator/scenarios"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    base = into / "simulator" / "scenarios"
    return sorted(
        p.parent for p in base.glob("*/scenario.toml") if not p.parent.name.startswith("_")
    )


def _cold(folder: Path, seed: int) -> float:
    loader.forget_renderings()
    start = time.perf_counter()
    load_instance(folder, seed)
    return (time.perf_counter() - start) * 1e3


def _memory(make: Callable[[int], object], count: int) -> float:
    """KiB per object `make` returns, everything it keeps alive included."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    live = [make(s) for s in range(count)]
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    size = sum(s.size_diff for s in after.compare_to(before, "filename"))
    return size / len(live) / 1024


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default="7e10fe8", help="the commit whose scenarios to compare")
    p.add_argument("--seeds", type=int, default=20, help="cold renders per scenario per side")
    p.add_argument("--sessions", type=int, default=100, help="idle episodes per memory figure")
    args = p.parse_args()
    # Every folder that renders on its own: the catalogue's families and the causes of the
    # symptom-first ones (a symptom-first family renders one of its causes' folders per seed).
    entries = [resolve(sid) for sid in (*scenario_ids(), *part_ids())]
    families = sorted(e.folder for e in entries if e.mix is None)
    with tempfile.TemporaryDirectory() as tmp:
        base = _extract(args.base, Path(tmp))
        for folder in (*base, *families):
            load_instance(folder, 0)  # each family's topology read once, as a server does
        # As a server's GcFreezer does (service/gc_freeze.py): what lived through start-up is
        # frozen, so a collection during a render walks what is new, not the whole heap.
        gc.collect()
        gc.freeze()
        render: dict[str, list[float]] = {"base": [], "families": []}
        per_family: dict[str, list[float]] = {}
        for k in range(args.seeds):
            seed = 1000 + k
            # interleaved, alternating which side goes first
            sides = [("base", base), ("families", families)]
            for side, folders in sides if k % 2 else reversed(sides):
                for folder in folders:
                    ms = _cold(folder, seed)
                    render[side].append(ms)
                    if side == "families":
                        per_family.setdefault(folder.name, []).append(ms)
        mem: dict[str, dict[str, float]] = {}
        for side, folders in (("base", base), ("families", families)):
            loader.forget_renderings()
            new = statistics.fmean(
                _memory(lambda s, f=f: _idle(f, 2000 + s), args.sessions) for f in folders
            )
            loader.forget_renderings()
            for f in folders:  # render seeds 0-4 first, as a running server has
                for s in range(5):
                    load_instance(f, s)
            same = statistics.fmean(
                _memory(lambda s, f=f: _idle(f, s % 5), args.sessions) for f in folders
            )
            mem[side] = {"new": new, "same": same}
    print(f"base {args.base}: {len(base)} scenarios; this tree: {len(families)} families")
    print(f"{'measure':<46} {'base':>9} {'families':>9} {'ratio':>6}")
    for label, q in (("p50", 0.5), ("p90", 0.9), ("max", 1.0)):
        b = sorted(render["base"])[int(q * (len(render["base"]) - 1))]
        f = sorted(render["families"])[int(q * (len(render["families"]) - 1))]
        print(f"{'render a new seed, cold (ms) ' + label:<46} {b:>9.1f} {f:>9.1f} {f / b:>5.2f}x")
    for key, label in (
        ("new", "idle episode, a new seed each (KiB)"),
        ("same", "idle episode, seeds 0-4 (KiB)"),
    ):
        b, f = mem["base"][key], mem["families"][key]
        print(f"{label:<46} {b:>9.1f} {f:>9.1f} {f / b:>5.2f}x")
    print()
    print(f"{'family':<28} {'p50 ms':>7} {'max ms':>7}")
    for name, samples in sorted(per_family.items()):
        print(f"{name:<28} {statistics.median(samples):>7.1f} {max(samples):>7.1f}")
    return 0


def _idle(folder: Path, seed: int) -> object:
    """An idle session's episode: made, observed once (the opening every session shows)."""
    inst = load_instance(folder, seed)
    ep = Episode(inst)
    ep.observation()
    return ep


if __name__ == "__main__":
    sys.exit(main())
