"""The expert with nothing to follow reads every log it can see, and acts only on a lone fault.

A personal-data leak with its scanner's line taken away pages nobody and leaves every row
healthy (as the withdrawn ads-data-v1 opened): the expert must read every service's log. The
same rule, seated alone in a team family's role that sees look-alike faults (schema-release's
two databases both rejecting rows, split-evidence's three releases all warning), must not bet
on one of them: the split of the evidence between the roles is what the family tests, and a
guess that lands one time in two would hide it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from metasre.agents.policies import ExpertPolicy, ToolReply
from metasre.conformance import EpisodeCaller
from metasre.simulator import Episode
from metasre.simulator.episode import Episode as _Episode
from metasre.simulator.observation import Opening
from metasre.simulator.scenarios.loader import load_instance
from metasre.simulator.scenarios.registry import resolve

OPERATIONS = {
    "rollback_deployment",
    "rollback_migration",
    "rollback_config",
    "restart_service",
    "scale_service",
    "edit_file",
}


class Recording:
    """A caller that keeps every (tool, args) it was asked to make."""

    def __init__(self, inner: EpisodeCaller) -> None:
        self.inner = inner
        self.made: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        self.made.append((tool, dict(args)))
        return self.inner(tool, args)

    def observation(self) -> dict[str, Any]:
        return self.inner.observation()


def _silent(seed: int) -> Episode:
    """pii-exposure-v2 at `seed` with its DLP scanner's terminal line dropped: nothing pages."""
    inst = load_instance(resolve("meta-sre/pii-exposure-v2").folder, seed)
    faults = tuple(f.model_copy(update={"terminal": ()}) for f in inst.spec.faults)
    spec = inst.spec.model_copy(update={"faults": faults})
    # A fresh opening: the instance's is filled by the first episode played from it (with the
    # scanner's line), and this world is another.
    return _Episode(replace(inst, spec=spec, opening=Opening()), None)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_page_with_nothing_sick_is_solved_by_reading_every_log(seed):
    ep = _silent(seed)
    obs = ep.observation().to_dict()
    assert not obs["alerts"] and not obs["terminal"]
    assert all(r["health"] == "healthy" for r in obs["services"])
    rec = Recording(EpisodeCaller(ep))
    ExpertPolicy().play(rec, rec.observation())
    assert ep.grade().resolved, f"seed {seed}"
    read = {a["service"] for t, a in rec.made if t == "read_logs"}
    assert len(read) >= 3, f"seed {seed}: the expert read only {sorted(read)}"


@pytest.mark.parametrize(
    ("family", "role"),
    [("meta-sre/schema-release-v2", "dba"), ("meta-sre/split-evidence-v2", "release-manager")],
)
def test_alone_in_a_role_that_sees_look_alike_faults_the_expert_looks_and_does_not_guess(
    family: str, role: str
):
    for seed in range(4):
        ep = Episode.make(family, seed)
        seat = next(r for r in ep.instance.spec.roles if r.name == role)
        rec = Recording(EpisodeCaller(ep, seat.name, seat.view))
        ExpertPolicy().play(rec, rec.observation())
        read = {a["service"] for t, a in rec.made if t == "read_logs"}
        assert len(read) >= 2, f"{family} seed {seed}: it must look ({sorted(read)})"
        acted = [t for t, _ in rec.made if t in OPERATIONS]
        assert not acted, f"{family} seed {seed}: alone in {role} it bet on {acted}"
        assert not ep.grade().resolved
