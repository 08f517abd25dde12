"""Red team of issue 25: the same ordered calls grade the same, in one process and across them.

A grade that moved with set order (PYTHONHASHSEED) or with what ran before would let a policy
farm the noise, and make a shallow check's figure a draw. Random call sequences (the random
agent, which also operates and edits) are recorded, replayed in a fresh episode, and replayed
in two child processes with different hash seeds; every grade component must agree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import pytest

from metasre.agents.policies import RandomPolicy
from metasre.agents.policies.base import ToolReply
from metasre.conformance import EpisodeCaller
from metasre.simulator import Episode
from metasre.simulator.tools import served_tools

from .shallow_play import SYMPTOM_FIRST

pytestmark = pytest.mark.xdist_group("redteam-determinism")

CASES = [(sid, seed, policy) for sid in SYMPTOM_FIRST for seed, policy in ((3, 11), (8, 12))]


class Recorder:
    """A caller that keeps the calls it carried, in order."""

    def __init__(self, inner: EpisodeCaller) -> None:
        self.inner = inner
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        self.calls.append((tool, dict(args)))
        return self.inner(tool, args)


def _graded(scenario_id: str, seed: int, calls: list[tuple[str, dict[str, Any]]]) -> list:
    ep = Episode.make(scenario_id, seed)
    caller = EpisodeCaller(ep, "replay")
    for tool, args in calls:
        if caller(tool, args).done:
            break
    return _components(ep)


def _components(ep: Episode) -> list:
    grade = ep.grade()
    return [grade.total, grade.resolved, [(c.name, c.score) for c in grade.components]]


_CHILD = """
import json, sys
from tests.redteam.test_grading_determinism import _graded
cases = json.load(sys.stdin)
print(json.dumps([_graded(c["id"], c["seed"], [tuple(x) for x in c["calls"]]) for c in cases]))
"""


def test_the_same_calls_grade_the_same_in_any_process():
    """Two random agents on two seeds of each family: a replay in this process, and one child
    process per hash seed replaying every case, grade each exactly as the first play did."""
    cases, firsts = [], []
    for scenario_id, seed, policy in CASES:
        ep = Episode.make(scenario_id, seed)
        recorder = Recorder(EpisodeCaller(ep, "random"))
        RandomPolicy(policy, served_tools(), max_calls=12).play(
            recorder, ep.observation().to_dict()
        )
        first = json.loads(json.dumps(_components(ep)))
        assert recorder.calls, "the random agent made no call"
        again = json.loads(json.dumps(_graded(scenario_id, seed, recorder.calls)))
        assert again == first, (scenario_id, seed)
        cases.append({"id": scenario_id, "seed": seed, "calls": recorder.calls})
        firsts.append(first)
    # Some case must operate or edit, or the grades compared would all be the empty episode's.
    assert len({json.dumps(f) for f in firsts}) > 1, firsts
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for hash_seed in ("0", "4242"):
        out = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=json.dumps(cases),
            capture_output=True,
            text=True,
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            timeout=600,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        theirs = json.loads(out.stdout.strip().splitlines()[-1])
        for case, first, their in zip(cases, firsts, theirs, strict=True):
            assert their == first, (hash_seed, case["id"], case["seed"])
