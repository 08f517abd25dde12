"""Issue 34: every benchmark runs at HEAD, so a moved module or a renamed id breaks CI, not the
next measurement.

Each tool of bench/ runs as a user runs it (``python -m bench...`` in a subprocess, in the
checkout) at the smallest sizes that still take every code path, and its output is read back:
a section that cannot run, or runs and measures nothing, fails here. The side-by-side tools
also take their earlier commit out of this repository's git history, as they do by default.
Figures at these sizes mean nothing and are not judged.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("tests", "transport", "reset", "rollouts", "scale")


def bench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stderr[-4000:]}"
    return done


def test_every_section_of_python_m_bench_runs_and_measures():
    payload = json.loads(bench("bench", "--smoke", "--json").stdout)
    assert set(payload["sections"]) == set(SECTIONS)
    rows = payload["rows"]
    for section in ("test runs", "transport", "reset", "rollouts", "scale"):
        assert any(r["section"] == section for r in rows), f"no rows for {section}"
    for row in rows:
        for key in ("value", "reference", "ratio"):
            value = row[key]
            assert value is None or math.isfinite(value), row
    raw = payload["sections"]
    assert all(raw["tests"][suite]["tests"] > 0 for suite in ("unit", "load", "security"))
    assert raw["transport"]["errors"] == 0
    assert all(raw["transport"][k]["calls"] > 0 for k in ("echo", "metasre", "unbatched"))
    assert raw["reset"]["server_cpu_ms_per_reset"] > 0
    assert raw["reset"]["in_process_cpu_ms_per_reset"] > 0
    for player in ("expert_p2", "team_p2"):
        figures = raw["rollouts"][player]
        assert figures["graded"] == figures["episodes"] == 2, figures["errors"]
    assert raw["scale"]["spread"]["calls"] > 0
    assert raw["scale"]["spread"]["errors"] == 0


def _has(commit: str) -> bool:
    found = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return found.returncode == 0


def _shallow() -> bool:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() == "true"


@pytest.mark.parametrize(
    ("module", "commit", "args", "expect"),
    [
        pytest.param(
            "bench.bench_grading",
            "d03eaf9",
            ("--runs", "1", "--scenarios", "db-connection-leak"),
            "last edit + submit_report, db-connection-leak",
            id="grading-vs-d03eaf9",
        ),
        pytest.param(
            "bench.bench_hot",
            "852f410",
            (
                *("--pairs", "1", "--resets", "10", "--seeds", "0", "--parallel", "2"),
                *("--scenarios", "migration-cascade", "--rounds", "1", "--sessions", "2"),
            ),
            "server CPU per cheap call (ms)",
            id="hot-path-vs-852f410-and-d03eaf9",
        ),
        pytest.param(
            "bench.bench_families",
            "7e10fe8",
            ("--seeds", "1", "--sessions", "1"),
            "render a new seed, cold (ms) p50",
            id="families-vs-7e10fe8",
        ),
    ],
)
def test_side_by_side_tools_run_against_their_default_earlier_commit(module, commit, args, expect):
    if not _has(commit) and _shallow():
        pytest.skip(f"{commit} is not in this shallow clone's history (git fetch --unshallow)")
    out = bench(module, *args).stdout
    assert expect in out
    assert commit in out


@pytest.mark.parametrize(
    ("module", "args", "expect"),
    [
        pytest.param(
            "bench.bench_simulator",
            ("--repeat", "2", "--episodes", "2", "--memory-episodes", "4"),
            "every call: apply + observation()",
            id="simulator",
        ),
        pytest.param("bench.bench_sandbox", ("--runs", "2"), "concurrent cold runs", id="sandbox"),
        pytest.param(
            "bench.bench_bridges",
            ("--episodes", "1", "--calls", "1"),
            "| MCP per seat | 32 |",
            id="bridges",
        ),
        pytest.param(
            "bench.bench_store",
            ("--sessions", "1", "--calls", "5", "--rounds", "1"),
            "| 1 | SQLite |",
            id="store",
        ),
        pytest.param(
            "bench.bench_views",
            ("--rounds", "1", "--streams", "2"),
            "a teammate's call on a stream",
            id="views",
        ),
    ],
)
def test_each_layer_benchmark_runs(module, args, expect):
    assert expect in bench(module, *args).stdout


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_instruction_count_runs():
    out = bench("bench.bench_instructions", "--tree", ".", "--runs", "1", "--sessions", "1")
    assert "39 cheap calls, 1 sessions x 3 seats" in out.stdout
    per_call = re.search(r"per call ([\d,]+) k", out.stdout)
    assert per_call is not None, out.stdout
    # counted while the calls ran (a call is millions of instructions), not left at zero
    assert int(per_call.group(1).replace(",", "")) > 500


def test_the_growth_benchmark_measures_every_sweep():
    rows = json.loads(
        bench(
            "bench.bench_growth",
            *("--sessions", "2", "--seats", "2", "--seat-sessions", "2", "--family-sessions", "1"),
            *("--families", "disk-full", "--calls", "1", "--json"),
        ).stdout
    )
    assert [(r["sweep"], r["sessions"], r["seats"]) for r in rows] == [
        ("held sessions", 2, 1),
        ("seats", 2, 2),
        ("families", 1, 1),
    ]
    assert rows[-1]["scenario"] == "meta-sre/disk-full-v1"
    for row in rows:
        assert row["server_cpu_ms_per_session"] >= 0 and math.isfinite(row["rss_kib_per_session"])
