"""meta-sre/pii-exposure-v2: the seed chooses where raw contact details leave whatsapp_sync or
capi_pipeline and how; the tables, the evidence and the answer key hold to the code the seed
builds."""

from __future__ import annotations

import itertools
import tomllib

import pytest

from metasre.agents.policies.evidence import categorise
from metasre.simulator import Episode
from metasre.simulator.replay import RecordedCall, replay
from metasre.simulator.scenarios.loader import SCENARIOS_DIR
from metasre.simulator.scenarios.registry import resolve

FAMILY = "meta-sre/pii-exposure-v2"
FOLDER = SCENARIOS_DIR / "pii_exposure"
TABLES = tomllib.loads((FOLDER / "scenario.toml").read_text())["variants"]["fault"]


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
    assert len(SEEDS) == 24
    entry = resolve(FAMILY)
    truths = [entry.spec(s).ground_truth for s in SEEDS.values()]
    assert len({(t.location, t.lines) for t in truths}) == 24
    assert {t.service for t in truths} == {"whatsapp_sync", "capi_pipeline"}
    assert len({t.location for t in truths}) == 5


@pytest.mark.parametrize("key", sorted(SEEDS))
def test_the_answer_key_is_the_edit_and_only_the_root_reads_as_an_exposure(key):
    ep = Episode.make(FAMILY, SEEDS[key])
    fault, truth = ep.instance.values["fault"], ep.instance.spec.ground_truth
    first, last = truth.lines
    text = ep.instance.tree.files[truth.location].splitlines()
    assert "\n".join(text[first - 1 : last]) == fault["bug"]
    terminal = [str(t) for t in ep.observation().to_dict()["terminal"]]
    for service in ("whatsapp_sync", "capi_pipeline", "ad_ranking"):
        reply = ep.apply("a", "read_logs", {"service": service, "level": "WARN", "lines": 80})
        lines = [r["text"] for r in reply.output.data["lines"]]
        lines += [t for t in terminal if f" {service}:" in t]
        expected = "security" if service == truth.service else None
        assert categorise(lines)[0] == expected, (service, lines)


def _overlapping():
    """Pairs of structures whose edits touch the same or neighbouring lines of one file."""
    pairs = []
    for a, b in itertools.permutations(TABLES, 2):
        if a["file"] == b["file"] and a["start"] <= b["end"] + 1 and b["start"] <= a["end"] + 1:
            pairs.append((a["key"], b["key"]))
    return pairs


@pytest.mark.parametrize(("memorised", "other"), _overlapping())
def test_one_structures_exact_fix_does_not_repair_a_neighbour(memorised, other):
    ref = Episode.make(FAMILY, SEEDS[memorised])
    calls = ref.play_steps(ref.instance.spec.solution)
    assert ref.grade().resolved
    ep = Episode.make(FAMILY, SEEDS[other])
    try:
        replay(ep, [RecordedCall(agent_id="replay", tool=tool, args=args) for tool, args in calls])
    except Exception:  # the memorised edit no longer fits: that is the point
        return
    assert not ep.grade().resolved


@pytest.mark.parametrize("key", ["profile-debug-reveals", "profile-debug-row", "audit-phone"])
def test_switching_debug_off_or_restarting_resolves_nothing(key):
    ep = Episode.make(FAMILY, SEEDS[key])
    out = ep.apply(
        "a",
        "edit_lines",
        {
            "path": "whatsapp_sync/config.py",
            "action": "replace",
            "find": "DEBUG = True",
            "content": "DEBUG = False",
        },
    )
    assert out.output.ok
    assert ep.apply("a", "restart_service", {"service": "whatsapp_sync"}).output.ok
    assert not ep.grade().resolved
