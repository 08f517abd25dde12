"""Benchmark of grading and test runs, this tree against an earlier commit, side by side.

Usage: python -m bench.bench_grading [--baseline COMMIT] [--runs N]

Each side runs in its own interpreter with its own ``metasre`` (the baseline from a git
worktree at COMMIT, default the commit before hermetic grading), alternating side after side
in one loop so machine load touches both alike. Measured per side:

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
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "d03eaf9"
"""The last commit before hermetic grading."""
PACKAGES = {"simulator": "simulator", "agents": "agents", "cli": "cli", "service": "service"}
CODE_SCENARIOS = (
    "meta-sre/ad-ranking-crash-v2",
    "meta-sre/timestamp-corruption-v2",
    "meta-sre/db-connection-leak-v2",
    "meta-sre/pii-exposure-v2",
)

# Runs in the measured interpreter; uses only what both sides offer (Episode.make/apply).
_PROBE = (
    r"""
import json, sys, time
from metasre.simulator import Episode
from metasre.simulator.episode import EpisodePhase

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
    ep = Episode.make("meta-sre/ad-ranking-crash-v2", 0)
    ep.apply("b", "edit_lines", {"path": "capi_pipeline/__init__.py", "action": "insert",
                                  "start_line": 1, "content": f"# bench {i}"})
    start = time.perf_counter()
    ep.apply("b", "run_tests", {"suite": "unit"})
    return (time.perf_counter() - start) * 1000

def report(i, scenario):
    ep = Episode.make(scenario, 0)
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
    out = {"unit_ms": unit(i), "report_ms": {}, "grade": {}}
    for scenario in %s:
        ms, total = report(i, scenario)
        out["report_ms"][scenario] = ms
        out["grade"][scenario] = total
    print(json.dumps(out), flush=True)
"""
).replace("%s", repr(CODE_SCENARIOS))


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


def _side(path: Path) -> subprocess.Popen[str]:
    # -S: no site, so the editable install's import hook cannot map metasre to this checkout
    boot = f"import sys; sys.path[:0] = [{str(path)!r}, {_site_packages()!r}]\n" + _PROBE
    return subprocess.Popen(
        [sys.executable, "-S", "-c", boot],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=tempfile.gettempdir(),
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline", default=BASELINE)
    p.add_argument("--runs", type=int, default=12)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(work / "before"),
             args.baseline],
            check=True, capture_output=True,
        )  # fmt: skip
        try:
            sides = {
                "before": _side(_namespace(work / "before", work / "ns-before")),
                "after": _side(_namespace(ROOT, work / "ns-after")),
            }
            results: dict[str, list[dict[str, object]]] = {k: [] for k in sides}
            for i in range(args.runs + 1):
                for name, proc in sides.items():
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(f"{i}\n")
                    proc.stdin.flush()
                    row = json.loads(proc.stdout.readline())
                    if i:
                        results[name].append(row)
            for proc in sides.values():
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait()
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / "before")],
                check=False, capture_output=True,
            )  # fmt: skip
    print(f"{'measure':<58} {'before':>9} {'after':>9} {'ratio':>7}")
    unit = {k: statistics.median(r["unit_ms"] for r in v) for k, v in results.items()}  # type: ignore[misc]
    print(f"{'run_tests unit cold, median (ms)':<58} {unit['before']:>9.1f} {unit['after']:>9.1f}"
          f" {unit['after'] / unit['before']:>6.2f}x")  # fmt: skip
    for scenario in CODE_SCENARIOS:
        ms = {k: statistics.median(r["report_ms"][scenario] for r in v) for k, v in results.items()}  # type: ignore[index]
        grade = {k: v[-1]["grade"][scenario] for k, v in results.items()}  # type: ignore[index]
        label = f"last edit + submit_report, {scenario.split('/')[1]} (ms)"
        ratio = ms["after"] / ms["before"]
        grades = f"grade {grade['before']:.3f} / {grade['after']:.3f}"
        print(f"{label:<58} {ms['before']:>9.1f} {ms['after']:>9.1f} {ratio:>6.2f}x   {grades}")


if __name__ == "__main__":
    main()
