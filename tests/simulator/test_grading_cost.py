"""Issue 34: what one grading's hidden probes cost, as the sandbox's supervisor measured it.

The figure comes from the supervisor's wait4 of the sandboxed child, never from anything the
child says, and it never reaches a grade: it only holds each family's probes to
``metasre validate``'s budget.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from metasre.conformance import validate
from metasre.simulator import Episode, resolve, sandbox

BURN = b"""
import json, sys, time

def burn():
    start = time.process_time()
    while time.process_time() - start < 0.3:
        pass
    # what a probe that wants to look cheap could print or return: none of it counts
    print(json.dumps({"cpu_seconds": 0.0}))
    sys.stdout.flush()
    return {"cpu_seconds": 0.0}

def idle():
    return 1
"""
FILES = {"svc/__init__.py": b"", "hidden/probes.py": BURN}


@pytest.fixture(scope="module")
def runner() -> Iterator[sandbox.SubprocessRunner]:
    fresh = sandbox.SubprocessRunner()
    yield fresh
    fresh.close()


def test_a_probe_run_reports_the_cpu_its_child_used_whatever_the_child_says(
    runner: sandbox.SubprocessRunner,
) -> None:
    burned = runner.observe(FILES, "hidden/probes.py", ["burn"])
    idle = runner.observe(FILES, "hidden/probes.py", ["idle"])
    assert burned.status == idle.status == "completed", burned.message + idle.message
    assert burned.cpu_seconds - idle.cpu_seconds >= 0.25
    assert idle.cpu_seconds > 0  # an interpreter's start is never free


def test_the_fork_server_reports_no_figure_rather_than_a_wrong_one() -> None:
    with sandbox.ForkServerRunner(purpose="grader", spares=0) as forked:
        report = forked.observe(FILES, "hidden/probes.py", ["burn"])
    assert report.status == "completed", report.message
    assert report.cpu_seconds == 0.0


def test_grading_cost_counts_the_probes_without_the_interpreter(
    runner: sandbox.SubprocessRunner,
) -> None:
    code = Episode.make(resolve("ad-ranking-crash").id, 0)
    cost = code.grading_cost(runner, runs=1)
    assert 0 < cost < 1.0
    # a family graded without hidden probes costs nothing and runs nothing
    assert Episode.make(resolve("disk-full").id, 0).grading_cost(runner, runs=1) == 0.0


def test_validate_fails_a_family_over_the_budget_and_names_the_figure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    episode = Episode.make(resolve("ad-ranking-crash").id, 0)
    within = validate.ScenarioVerdict(episode.instance.spec.id, [])
    validate.check_grading_cost(within, episode, 1)
    assert within.grading_ms is not None and 0 < within.grading_ms <= validate.GRADING_BUDGET_MS
    assert within.failures == []
    assert within.to_dict()["grading_cpu_ms"] == within.grading_ms

    monkeypatch.setattr(validate, "GRADING_BUDGET_MS", 0.001)
    over = validate.ScenarioVerdict(episode.instance.spec.id, [])
    validate.check_grading_cost(over, episode, 1)
    (failure,) = over.failures
    assert f"{over.grading_ms:.0f} ms of CPU" in failure and "at most 0" in failure
