"""The hot path side by side: this tree's server against earlier commits', alternating.

Usage: python -m bench.bench_hot [--before COMMIT] [--earlier COMMIT] [--main COMMIT]
       [--pairs N] [sizes]

Each side is a `python -m bench transport reset rollouts --json` run in its own process, one
side after the other in every pair (the order swapped each pair), so the machine's load meets
both alike; the figures are the medians over the pairs, the ratios after / before.

- `before` (default `852f410`, issue 34's starting commit) runs under this tree's harness: its
  packages are taken out of git and put first on the path (as `bench.bench_grading` does), so
  the same client and the same measurement meet its server.
- `main` (`--main`, none by default) runs as `before` does: a branch's own starting point, so
  one sitting puts the branch beside both the issue's start and the tree it branched from.
- `earlier` (default `d03eaf9`, the tree whose reset cost the issue measured against) runs its
  own harness (this one needs names it lacks), reset section only: its whole tree is taken out.

The load average is read before and after every run.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from bench.bench_grading import _extract, _namespace

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "852f410"
EARLIER = "d03eaf9"

FIGURES = (
    ("transport", "server CPU per cheap call (ms)", ("metasre", "server_cpu_ms_per_call")),
    ("transport", "cheap calls/s, 16x3 streams", ("metasre", "calls_per_s")),
    (
        "transport",
        "  echo with META-SRE's fan-out: CPU per call (ms)",
        ("fanout_batched", "server_cpu_ms_per_call"),
    ),
    ("reset", "server CPU per CreateSession+join (ms)", ("server_cpu_ms_per_reset",)),
    ("reset", "  in process, no gRPC (ms)", ("in_process_cpu_ms_per_reset",)),
    ("reset", "  echo join (ms)", ("echo_server_cpu_ms_per_join",)),
    ("rollouts", "expert, parallel 32 (graded ep/s)", ("expert_p32", "graded_eps")),
    ("rollouts", "team, parallel 32 (graded ep/s)", ("team_p32", "graded_eps")),
)


def _whole(rev: str, into: Path) -> Path:
    blob = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    return into


def _run(cwd: Path, path: list[Path], sections: list[str], sizes: list[str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in path))
    load = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, "-m", "bench", *sections, "--json", *sizes],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"bench in {cwd} failed:\n{done.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(done.stdout)["sections"]
    out["load"] = (load, os.getloadavg()[0])
    return out


def _figure(run: dict[str, Any], section: str, keys: tuple[str, ...]) -> float | None:
    value: Any = run.get(section)
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return float(value)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", default=BEFORE)
    p.add_argument("--earlier", default=EARLIER, help="'' to leave it out")
    p.add_argument("--main", default="", help="a third tree run as `before` is (a branch's base)")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--resets", default="500")
    p.add_argument("--seeds", default="0-3")
    p.add_argument("--parallel", default="32")
    p.add_argument("--scenarios", nargs="*", default=[])
    p.add_argument("--rounds", default="2", help="transport rounds per run")
    p.add_argument("--sessions", default="16", help="transport sessions (of 3 seats)")
    p.add_argument("--sections", nargs="+", default=["transport", "reset", "rollouts"])
    p.add_argument("--json", help="write every run's raw figures to this file")
    args = p.parse_args()
    sizes = ["--resets", args.resets, "--seeds", args.seeds, "--parallel", args.parallel]
    sizes += ["--rounds", args.rounds] + (
        ["--scenarios", *args.scenarios] if args.scenarios else []
    )
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": [], "earlier": [], "main": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        before = _namespace(_extract(args.before, work / "before"), work / "ns-before")
        sides: list[tuple[str, Path, list[Path], list[str], list[str]]] = [
            ("before", ROOT, [ROOT, before], args.sections, sizes),
            ("after", ROOT, [ROOT], args.sections, sizes),
        ]
        if args.main:
            base = _namespace(_extract(args.main, work / "main"), work / "ns-main")
            sides.insert(1, ("main", ROOT, [ROOT, base], args.sections, sizes))
        if args.earlier and "reset" in args.sections:
            tree = _whole(args.earlier, work / "earlier")
            ns = _namespace(tree, work / "ns-earlier")
            sides.append(("earlier", tree, [tree, ns], ["reset"], ["--resets", args.resets]))
        for k in range(args.pairs):
            for name, cwd, path, sections, told in sides if k % 2 == 0 else reversed(sides):
                print(f"... pair {k + 1}: {name}", file=sys.stderr, flush=True)
                runs[name].append(_run(cwd, path, sections, told))
    loads = [x for side in runs.values() for r in side for x in r["load"]]
    print(
        f"before {args.before}, earlier {args.earlier or '-'}, main {args.main or '-'}, "
        f"after this tree; {args.pairs} pairs"
    )
    print(f"load average {min(loads):.1f}-{max(loads):.1f}")
    names = ("earlier", "before", "main", "after")
    heads = " ".join(f"{h:>8}" for h in names)
    print(f"{'figure (median of the pairs)':<52} {heads} {'a/b':>6} {'a/e':>6} {'a/m':>6}")
    for section, label, keys in FIGURES:
        med = {}
        for name, side in runs.items():
            values = [v for r in side if (v := _figure(r, section, keys)) is not None]
            med[name] = statistics.median(values) if values else None
        if med["after"] is None:
            continue
        cells = [f"{med[n]:>8.3g}" if med[n] is not None else f"{'-':>8}" for n in names]
        ratios = [
            f"{med['after'] / med[n]:>5.2f}x" if med[n] else f"{'-':>6}"
            for n in ("before", "earlier", "main")
        ]
        print(f"{label:<52} {' '.join(cells)} {' '.join(ratios)}")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
