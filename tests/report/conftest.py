"""Real rollouts for the report's tests: expert, random and the scripted team, in three stores,
and `metasre validate --json` over the same families and seeds.

Each agent plays its own `metasre rollout` subprocess with a server in process, recording into
a store of its own, all at once with the validation; made once for the whole folder. The
expert plays each instance twice (repetitions for pass@k); random and the team once.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

FAMILIES = ("payment-bad-deploy", "split-evidence")
"""A single-fault family and a team family whose roles see different halves."""
SEEDS = "2-3"
"""One seed of each split in each family: payment-bad-deploy 2 test, 3 train; split-evidence
2 train, 3 test."""
EPISODES = {"expert": 8, "random": 4, "team": 4}
"""Two scenarios x two seeds: the expert plays each twice."""


@dataclass(frozen=True)
class Played:
    """The stores of one set of rollouts."""

    folder: Path
    stores: dict[str, Path]
    validation: Path


@pytest.fixture(scope="session")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    folder = tmp_path_factory.mktemp("report-rollouts")
    stores = {agent: folder / f"{agent}.db" for agent in EPISODES}
    procs = {
        agent: subprocess.Popen(
            [
                sys.executable,
                "-m",
                "metasre.cli.main",
                "rollout",
                "--agent",
                agent,
                *(a for f in FAMILIES for a in ("--scenario", f)),
                "--seeds",
                SEEDS,
                "--episodes",
                str(EPISODES[agent]),
                "--parallel",
                "4",
                "--store",
                str(store),
                "--no-progress",
                "--json",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for agent, store in stores.items()
    }
    validation = folder / "validate.json"
    with validation.open("w") as out:
        validate = subprocess.Popen(
            [
                *(sys.executable, "-m", "metasre.cli.main", "validate", *FAMILIES),
                *("--seeds", SEEDS, "--random-seeds", SEEDS, "--json"),
                # The shallow learner's fit on 60 training seeds costs ~10 s of CPU: not here.
                *("--shallow-seeds", "0"),
            ],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
        )
        for agent, proc in [*procs.items(), ("validate", validate)]:
            _, err = proc.communicate(timeout=120)
            # random grades low: rollout exits 0 as long as every episode was graded
            assert proc.returncode == 0, f"{agent}: {err}"
    return Played(folder, stores, validation)
