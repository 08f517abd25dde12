"""meta-sre/db-connection-leak-v2: the seed chooses which pooled call of whatsapp_sync leaks and
how; the tables, the evidence and the answer key hold to the code the seed builds."""

from __future__ import annotations

import ast
import importlib
import itertools

import pytest

from metasre.agents.policies.evidence import categorise
from metasre.simulator import Episode
from metasre.simulator.replay import RecordedCall, replay
from metasre.simulator.scenarios.registry import resolve

FAMILY = "meta-sre/db-connection-leak-v2"


def _generator():
    return importlib.import_module("tools.families.axes.db_connection_leak")


def _seed_per_structure() -> dict[str, int]:
    """The first seed of each table: seeds 0..n-1 meet every table once."""
    entry = resolve(FAMILY)
    seeds: dict[str, int] = {}
    seed = 0
    while True:
        key = entry.instance(seed).values["fault"]["key"]
        if key in seeds:
            return seeds
        seeds[key] = seed
        seed += 1


SEEDS = _seed_per_structure()


def test_every_structure_is_met_in_the_first_cycle_and_varies_the_answer():
    assert len(SEEDS) == 33
    entry = resolve(FAMILY)
    truths = [entry.spec(s).ground_truth for s in SEEDS.values()]
    assert len({(t.location, t.lines) for t in truths}) == 33
    assert len({t.location for t in truths}) == 6
    assert {t.service for t in truths} == {"whatsapp_sync", "capi_pipeline"}


@pytest.mark.parametrize("key", sorted(SEEDS))
def test_the_answer_key_is_the_broken_block_and_the_evidence_reads_as_a_leak(key):
    ep = Episode.make(FAMILY, SEEDS[key])
    fault, truth = ep.instance.values["fault"], ep.instance.spec.ground_truth
    text = ep.instance.tree.files[truth.location]
    first, last = truth.lines
    assert "\n".join(text.splitlines()[first - 1 : last]) == fault["bug"]
    assert fault["find"] not in text
    if fault["db"]:  # postgres names a query the leaking call's service defines
        package = truth.location.split("/")[0] + "/"
        files = ep.instance.tree.files
        assert fault["query"] in [
            q for path in files if path.startswith(package) for q in _queries(files[path])
        ]
    lines = [
        r["text"]
        for r in ep.apply(
            "a", "read_logs", {"service": truth.service, "level": "WARN", "lines": 80}
        ).output.data["lines"]
    ]
    assert categorise(lines)[0] == "resource_leak"
    pg = [
        r["text"]
        for r in ep.apply(
            "a", "read_logs", {"service": "postgres", "level": "WARN", "lines": 80}
        ).output.data["lines"]
    ]
    assert categorise(pg)[0] is None, "postgres's own lines must not read as its own fault"


def _queries(source):
    """The string constants a module assigns (its SQL), as the code defines them."""
    return [
        node.value.value
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]


SIBLINGS = [
    pair
    for _, group in itertools.groupby(
        sorted(_generator().FAULTS, key=lambda f: (f["file"], f["fn"])),
        key=lambda f: (f["file"], f["fn"]),
    )
    for pair in itertools.permutations([f["key"] for f in group], 2)
]


@pytest.mark.parametrize(("memorised", "other"), SIBLINGS)
def test_one_structures_exact_fix_does_not_repair_its_sibling(memorised, other):
    ref = Episode.make(FAMILY, SEEDS[memorised])
    calls = ref.play_steps(ref.instance.spec.solution)
    assert ref.grade().resolved
    ep = Episode.make(FAMILY, SEEDS[other])
    try:
        replay(ep, [RecordedCall(agent_id="replay", tool=tool, args=args) for tool, args in calls])
    except Exception:  # the memorised edit no longer fits: that is the point
        return
    assert not ep.grade().resolved


@pytest.mark.parametrize(
    "key", ["get-user-early-return", "send-slot-refused", "media-fetch-raise", "capi-purge-raise"]
)
def test_a_restart_or_a_rollback_does_not_resolve_it(key):
    for tool in ("restart_service", "rollback_deployment"):
        ep = Episode.make(FAMILY, SEEDS[key])
        root = ep.instance.spec.ground_truth.service
        assert ep.apply("a", tool, {"service": root}).output.ok
        assert not ep.grade().resolved
