"""Benchmark of grading and test runs, this tree against an earlier commit, side by side.

Usage: python -m bench.bench_grading [--baseline COMMIT] [--runs N] [--scenarios NAME ...]

Each side runs in its own interpreter with its own ``metasre`` (the baseline's packages taken
out of git at COMMIT with ``git archive``, default the commit before hermetic grading),
alternating side after side in one loop so machine load touches both alike. Scenarios are
named without their version: each side plays its own newest version of each. Measured per side:

- a cold ``run_tests unit`` on ad-ranking-crash: every iteration edits a service file first,
  so no cache has seen the code;
- the grader's time per ``submit_report`` on the four code-fault scenarios: after the
  reference fix, the timed part is a last edit (a comment line unique to the iteration, in the
  root-cause file) and the report. The edit runs the hidden checks on code no cache has seen
  (the world asks whether the fault is cured), the report's grading reuses that run: together
  they are what grading one fixed episode costs. The first round is dropped:
  it pays the helpers' start-up and, after hermetic grading, the reference world's run, once
  per scenario and seed.
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

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "d03eaf9"
"""The last commit before hermetic grading."""
PACKAGES = {"simulator": "simulator", "agents": "agents", "cli": "cli", "service": "service"}
CODE_SCENARIOS = (
    "ad-ranking-crash",
    "timestamp-corruption",
    "db-connection-leak",
    "pii-exposure",
)
"""By name: each side resolves its own newest version (the baseline's are -v1, this tree's -v2)."""

# Runs in the measured interpreter; uses only what both sides offer (Episode.make/apply).
_PROBE = r"""
import json, sys, time
from metasre.simulator import Episode, resolve
from metasre.simulator.episode import EpisodePhase

SCENARIOS = {name: resolve(name).id for name in json.loads(sys.argv[1])}

def resolve_find(ep, step):
    args = dict(step.args)
    needle = args.pop("find", None)
    if needle is not None:
        line = ep.workspace.find_line(str(args["path"]), str(needle))
        args.setdefault("start_line", line)
        if args.get("action") != "insert":
            args.setdefault("end_line", line)
    return args

def unit(i):
    ep = Episode.make(resolve("ad-ranking-crash").id, 0)
    ep.apply("b", "edit_lines", {"path": "capi_pipeline/__init__.py", "action": "insert",
                                  "start_line": 1, "content": f"# bench {i}"})
    start = time.perf_counter()
    ep.apply("b", "run_tests", {"suite": "unit"})
    return (time.perf_counter() - start) * 1000

def report(i, scenario):
    ep = Episode.make(SCENARIOS[scenario], 0)
    steps = list(ep.instance.spec.solution)
    for step in steps[:-1]:
        ep.apply("b", step.tool, resolve_find(ep, step))
    code = ep.instance.spec.ground_truth.location.split(":")[0]
    last = steps[-1]
    start = time.perf_counter()
    ep.apply("b", "edit_lines", {"path": code, "action": "insert", "start_line": 1,
                                  "content": f"# bench {i}"})
    step = ep.apply("b", last.tool, resolve_find(ep, last))
    ms = (time.perf_counter() - start) * 1000
    assert step.phase is not EpisodePhase.RUNNING
    return ms, step.grade.total

for line in sys.stdin:
    i = int(line)
    out = {"unit_ms": unit(i), "report_ms": {}, "grade": {}, "ids": SCENARIOS}
    for scenario in SCENARIOS:
        ms, total = report(i, scenario)
        out["report_ms"][scenario] = ms
        out["grade"][scenario] = total
    print(json.dumps(out), flush=True)
"""


def _site_packages() -> str:
    import sysconfig

    return sysconfig.get_paths()["purelib"]


def _namespace(tree: Path, into: Path) -> Path:
    """A folder holding ``metasre`` as links to ``tree``'s top-level folders."""
    ns = into / "metasre"
    ns.mkdir(parents=True)
    for name, folder in PACKAGES.items():
        os.symlink(tree / folder, ns / name)
    os.symlink(tree / "protos" / "metasre" / "v1", ns / "v1")
    return into


def _extract(rev: str, into: Path) -> Path:
    """The packages of ``rev`` (a commit of this repository's history) in the folder ``into``."""
    folders = [*PACKAGES.values(), "protos"]
    blob = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, *folders], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    return into


def _side(path: Path, scenarios: list[str]) -> subprocess.Popen[str]:
    # -S: no site, so the editable install's import hook cannot map metasre to this checkout
    boot = f"import sys; sys.path[:0] = [{str(path)!r}, {_site_packages()!r}]\n" + _PROBE
    return subprocess.Popen(
        [sys.executable, "-S", "-c", boot, json.dumps(scenarios)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=tempfile.gettempdir(),
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline", default=BASELINE)
    p.add_argument("--runs", type=int, default=12, help="timed rounds (after one dropped)")
    p.add_argument(
        "--scenarios",
        nargs="+",
        default=list(CODE_SCENARIOS),
        help="code-fault scenarios by name (default: the four of the baseline)",
    )
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        before = _extract(args.baseline, work / "before")
        sides = {
            "before": _side(_namespace(before, work / "ns-before"), args.scenarios),
            "after": _side(_namespace(ROOT, work / "ns-after"), args.scenarios),
        }
        trees = {"before": args.baseline, "after": "this tree"}
        try:
            results: dict[str, list[dict[str, object]]] = {k: [] for k in sides}
            for i in range(args.runs + 1):
                for name, proc in sides.items():
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(f"{i}\n")
                    proc.stdin.flush()
                    line = proc.stdout.readline()
                    if not line:  # its traceback went to stderr
                        raise SystemExit(f"the {name} side ({trees[name]}) stopped")
                    row = json.loads(line)
                    if i:
                        results[name].append(row)
        finally:
            for proc in sides.values():
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait()
    ids = {k: v[-1]["ids"] for k, v in results.items()}
    print(f"before: {args.baseline} ({', '.join(ids['before'].values())})")  # type: ignore[attr-defined]
    print(f"after: this tree ({', '.join(ids['after'].values())})")  # type: ignore[attr-defined]
    print(f"{'measure':<58} {'before':>9} {'after':>9} {'ratio':>7}")
    unit = {k: statistics.median(r["unit_ms"] for r in v) for k, v in results.items()}  # type: ignore[misc]
    print(f"{'run_tests unit cold, median (ms)':<58} {unit['before']:>9.1f} {unit['after']:>9.1f}"
          f" {unit['after'] / unit['before']:>6.2f}x")  # fmt: skip
    for scenario in args.scenarios:
        ms = {k: statistics.median(r["report_ms"][scenario] for r in v) for k, v in results.items()}  # type: ignore[index]
        grade = {k: v[-1]["grade"][scenario] for k, v in results.items()}  # type: ignore[index]
        label = f"last edit + submit_report, {scenario} (ms)"
        ratio = ms["after"] / ms["before"]
        grades = f"grade {grade['before']:.3f} / {grade['after']:.3f}"
        print(f"{label:<58} {ms['before']:>9.1f} {ms['after']:>9.1f} {ratio:>6.2f}x   {grades}")


if __name__ == "__main__":
    main()
