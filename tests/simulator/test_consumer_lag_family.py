"""meta-sre/consumer-lag-v1: the seed chooses the queue and why its consumer fell behind (a
poison head message, a surge beyond its replicas, a broken release), so the remedy."""

from __future__ import annotations

import pytest

from metasre.simulator import Episode
from metasre.simulator.scenarios.registry import resolve

FAMILY = "meta-sre/consumer-lag-v1"
STRUCTURES = range(25)
"""Seeds 0-24 meet each of the 25 structures once (one stratified cycle)."""


def _seeds(mech):
    entry = resolve(FAMILY)
    return [s for s in STRUCTURES if entry.instance(s).values["fault"]["mech"] == mech]


def test_queues_consumers_and_remedies_vary():
    entry = resolve(FAMILY)
    queues, consumers, remedies = set(), set(), set()
    for seed in STRUCTURES:
        truth = entry.spec(seed).ground_truth
        fault = entry.instance(seed).values["fault"]
        queues.add(fault["queue"])
        consumers.add(truth.service)
        remedies.add((truth.category, truth.remediation))
    assert len(queues) == 13 and len(consumers) == 6
    assert remedies == {
        ("consumer_lag", "skip_message"),
        ("consumer_lag", "scale_service"),
        ("bad_deployment", "rollback_deployment"),
    }


@pytest.mark.parametrize("seed", _seeds("poison"))
def test_the_poison_trace_is_the_handlers_real_line_and_another_queue_skip_does_not_help(seed):
    ep = Episode.make(FAMILY, seed)
    lines = [line for b in ep.instance.spec.faults[0].logs for line in b.lines]
    frame = next(line for line in lines if line.startswith('  File "'))
    path, _, rest = frame.removeprefix('  File "').partition('", line ')
    number = int(rest.split(",")[0])
    code = ep.instance.tree.files[path].split("\n")[number - 1].strip()
    assert lines[lines.index(frame) + 1].strip() == code
    mine = ep.instance.values["fault"]["queue"]
    other = next(q.name for q in ep.instance.spec.queues if q.name != mine)
    assert ep.apply("a", "skip_message", {"queue": other}).output.ok
    assert not ep.grade().resolved


@pytest.mark.parametrize("seed", _seeds("surge"))
def test_one_replica_short_does_not_resolve(seed):
    ep = Episode.make(FAMILY, seed)
    fault = ep.instance.values["fault"]
    need = fault["params"]["required_replicas"]
    assert ep.apply(
        "a", "scale_service", {"service": fault["service"], "replicas": need - 1}
    ).output.ok
    assert not ep.grade().resolved


@pytest.mark.parametrize("seed", [*_seeds("release")[:2], *_seeds("poison")[:1]])
def test_restarting_the_consumer_resolves_nothing(seed):
    ep = Episode.make(FAMILY, seed)
    assert ep.apply(
        "a", "restart_service", {"service": ep.instance.spec.ground_truth.service}
    ).output.ok
    assert not ep.grade().resolved
