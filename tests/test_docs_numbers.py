"""The README's numbers and the help texts' team wording are the code's (issue 28, item 12).

A figure written in prose drifts when its constant changes (the reward per cured fault read +0.2
where the demos showed +0.40 and +0.60; db-connection-leak's ground truths read 30 where
`metasre scenarios` said 33; `llm --help` promised "a team of three" on families that seat
their own roles). Each figure below is read from the README and compared with what the code
says, through the command line where a user would look it up.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from metasre.agents.policies.team import ROLES
from metasre.simulator import IncidentReport
from metasre.simulator.report import _TYPED_PREFIXES
from metasre.simulator.rewards import (
    FAULT_CURED,
    FAULT_RETURNED,
    HINT_PRICES,
    HINT_REPEAT_PRICE,
    OPERATION,
    OVER_PROVISION_FACTOR,
    UNNEEDED_OPERATION,
)
from metasre.simulator.scenarios.spec import CATEGORIES, REMEDIATIONS
from metasre.simulator.world import MIGRATION_OUTAGE, RESTART_OUTAGE, ROLLBACK_OUTAGE

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PROSE = " ".join(README.split())
"""The README with its line breaks and runs of spaces folded, so phrases match across lines."""


def _metasre(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_reward_figures_are_the_shapings_constants():
    twice = {2: "twice"}[OVER_PROVISION_FACTOR]
    phrases = [
        f"a fault cured (+{FAULT_CURED:g}",
        f"or brought back ({FAULT_RETURNED:g})",
        f"The +{FAULT_CURED:g} is per fault mechanism the call cures",
        f"rollback pays +{2 * FAULT_CURED:g})",
        f"every operation costs the same {-OPERATION:g}",
        f"costs {-UNNEEDED_OPERATION:g} with no cap",
        f"a scale past {twice} the replicas needed",
        f"cost what they reveal ({HINT_PRICES[0]:g} for a direction, {HINT_PRICES[1]:g} for the "
        f"root service, {HINT_PRICES[2]:g} for its location, {HINT_REPEAT_PRICE:g} for each "
        "repeat)",
        f"errors on the service for {RESTART_OUTAGE[0]} minute after a restart, "
        f"{ROLLBACK_OUTAGE[0]} after a rollback, {MIGRATION_OUTAGE[0]} after a migration "
        "rollback",
    ]
    missing = [p for p in phrases if p not in PROSE]
    assert not missing, f"the README no longer says what the code does: {missing}"
    # "a run that buys every hint grades <= 0.5": the hints alone take at least that much.
    assert 1 - sum(HINT_PRICES) <= 0.5


def test_the_family_tables_ground_truths_are_what_metasre_scenarios_counts():
    out = _metasre("scenarios", "--json")
    assert out.returncode == 0, out.stderr
    counted = {row["id"]: row["ground_truths"] for row in json.loads(out.stdout)}
    written = {
        family: int(truths)
        for family, truths in re.findall(
            r"^\| `(meta-sre/[a-z0-9-]+)`[^|]*\| [^|]*\| (\d+) \|", README, re.MULTILINE
        )
    }
    assert set(written) == set(counted), "the README's family table lists other families"
    wrong = {f: (n, counted[f]) for f, n in written.items() if counted[f] != n}
    assert not wrong, f"README vs metasre scenarios (family: (README, counted)): {wrong}"


def test_the_help_texts_say_which_team_sits():
    for command in (("demo", "--help"), ("llm", "--help")):
        out = _metasre(*command)
        assert out.returncode == 0, out.stderr
        text = " ".join(out.stdout.split())
        assert "team of three" not in text, command
        assert "one seat per role" in text or "one per role" in text, command
        assert len(ROLES) == 3 and "three generalists" in text, (command, text)
        assert ", ".join(ROLES) in text, command


def test_the_readme_lists_the_reports_fields_categories_remediations_and_locations():
    section = " ".join(README.split("### The incident report", 1)[1].split("\n## ", 1)[0].split())
    for name in IncidentReport.model_fields:
        assert f"`{name}`" in section, name
    for category in CATEGORIES:
        assert f"`{category}`" in section, category
    for remediation in REMEDIATIONS:
        assert f"`{remediation}`" in section, remediation
    for prefix in _TYPED_PREFIXES:
        assert f"`{prefix}" in section, prefix
