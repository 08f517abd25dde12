"""ad-ranking-crash-v2: the evidence each fault table writes matches the code the seed builds.

The stack traces in a family's fault tables are data, so nothing but this test keeps them true
to the code: every frame must name a real line of the rendered tree, with that line's text, and
the ground truth's lines must be where the bad commit changed the file.
"""

import re

import pytest

from metasre.simulator import resolve

FAMILY = "meta-sre/ad-ranking-crash-v2"
FRAME = re.compile(r'^  File "/app/(?P<path>[^"]+)", line (?P<line>\d+), in \w+')


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
def test_the_logged_trace_quotes_the_code_it_names(key):
    inst = resolve(FAMILY).instance(SEEDS[key])
    trace = inst.values["fault"]["trace"]
    frames = 0
    for number, text in enumerate(trace):
        match = FRAME.match(text)
        if not match:
            continue
        frames += 1
        lines = inst.tree.files[match["path"]].splitlines()
        assert lines[int(match["line"]) - 1].strip() == trace[number + 1].strip(), text
    assert (
        frames >= 1
        and trace[0].startswith("Traceback")
        and trace[-1] == inst.values["fault"]["error"]
    )


@pytest.mark.parametrize("key", sorted(SEEDS))
def test_the_answer_key_points_at_the_changed_line(key):
    inst = resolve(FAMILY).instance(SEEDS[key])
    fault, truth = inst.values["fault"], inst.spec.ground_truth
    text = inst.tree.files[truth.location].splitlines()
    line = text[truth.lines[0] - 1]
    if fault["bug"].strip():
        assert fault["bug"].splitlines()[0].strip() in line
    else:  # the commit removed lines: the answer key is where they were
        assert fault["find"] not in "\n".join(text)
