"""A team family's page names no fault's service: every seat reads it, so a name there would
tell a seat what its view is meant to hide. (A role's description may list the services the
role owns, the failing one among its peers, as the role's view does.)"""

from __future__ import annotations

import re

import pytest

from metasre.simulator import resolve, scenario_ids

TEAM_FAMILIES = [sid for sid in scenario_ids() if resolve(sid).spec(0).roles]


def test_the_four_team_families_declare_roles():
    names = {sid.split("/")[1].rsplit("-v", 1)[0] for sid in TEAM_FAMILIES}
    assert {"twin-faults", "parallel-sla", "split-evidence", "schema-release"} <= names


@pytest.mark.parametrize("family", TEAM_FAMILIES)
def test_no_page_names_a_faults_service(family):
    for seed in range(0, 100, 7):
        spec = resolve(family).spec(seed)
        roots = {spec.ground_truth.service, *(f.service for f in spec.ground_truth.further_faults)}
        # The page: its title and what it says happened (its first sentence); the role
        # listings after it name every service of each role alike.
        shared = spec.title + " " + spec.description.split(". ", 1)[0]
        for root in roots:
            assert not re.search(rf"(?<![\w-]){re.escape(root)}(?![\w-])", shared), (seed, root)
