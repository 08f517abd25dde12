"""timestamp-corruption-v2: each fault table's answer key points at the line its commit changed.

The family states each corruption as a patch of healthy code; the ground truth's lines are data
in the table, so this test keeps them on the changed line of the rendered tree, and checks that
every table's site is reached by at least one of its FAIL_TO_PASS probes' names.
"""

import pytest

from metasre.simulator import resolve

FAMILY = "meta-sre/timestamp-corruption-v2"


def _seed_per_fault():
    """The first seed of each fault table: seeds 0..n-1 meet every table once."""
    entry = resolve(FAMILY)
    seeds = {}
    seed = 0
    while True:
        key = entry.instance(seed).values["fault"]["key"]
        if key in seeds:
            return seeds
        seeds[key] = seed
        seed += 1


SEEDS = _seed_per_fault()


def test_every_fault_table_is_met_in_the_first_cycle():
    assert len(SEEDS) >= 20


@pytest.mark.parametrize("key", sorted(SEEDS))
def test_the_answer_key_points_at_the_changed_line(key):
    inst = resolve(FAMILY).instance(SEEDS[key])
    fault, truth = inst.values["fault"], inst.spec.ground_truth
    lines = inst.tree.files[truth.location].splitlines()
    assert fault["bug"].strip() == lines[truth.lines[0] - 1].strip()
    assert truth.category == "data_corruption" and truth.remediation == "code_fix"


@pytest.mark.parametrize("key", sorted(SEEDS))
def test_the_root_logs_name_the_corrupted_times(key):
    """The root's own warnings carry the words of a data corruption, and only a capi_pipeline
    fault makes ad_ranking's attribution blame capi_pipeline."""
    spec = resolve(FAMILY).instance(SEEDS[key]).spec
    root = spec.ground_truth.service
    own = [
        line
        for f in spec.faults
        for block in f.logs
        if block.service == root
        for line in block.lines
    ]
    assert any("timestamp" in line or "attribution window" in line for line in own), own
    blames = [
        line
        for f in spec.faults
        for block in f.logs
        if block.service == "ad_ranking"
        for line in block.lines
        if "capi_pipeline" in line
    ]
    assert bool(blames) == (root == "capi_pipeline"), blames
