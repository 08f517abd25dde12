"""Weather rows, dealt-out loudness and spread pushes: the herrings a symptom-first family can
add so that no row of the opening names the root by rule (scenarios/herrings.py)."""

import random
from collections import Counter

import pytest

from metasre.conformance import EpisodeCaller
from metasre.simulator import Episode
from metasre.simulator.episode import Episode as _Episode
from metasre.simulator.scenarios.herrings import Herrings, add_herrings
from metasre.simulator.scenarios.loader import ScenarioInstance, load_instance
from metasre.simulator.scenarios.registry import resolve

PUSHES = (("cache.ttl_s", 300, 600), ("log_sampling_pct", 10, 25), ("metrics.flush_s", 15, 10))
HERRINGS = Herrings(config_pushes=PUSHES, push_count=4, weather=2, shuffle_loudness=True)


def _instance(seed: int) -> ScenarioInstance:
    base = load_instance(resolve("meta-sre/bad-config-push-v1").folder, seed)
    spec = base.spec.model_copy(update=add_herrings(base.spec, HERRINGS, random.Random(seed)))
    return ScenarioInstance(
        spec=spec,
        seed=seed,
        values=base.values,
        tree=base.tree,
        hidden_files=base.hidden_files,
    )


def _episode(seed: int) -> Episode:
    return _Episode(_instance(seed), None)


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_weather_rows_are_sick_from_the_start_and_say_why_in_their_logs(seed):
    ep = _episode(seed)
    rows = {r["name"]: r for r in ep.observation().to_dict()["services"]}
    weather = sorted({w.service for w in ep.instance.spec.weather})
    assert len(weather) == 2
    truth = ep.instance.spec.ground_truth
    assert not set(weather) & {truth.service, *truth.symptom_services}
    for service in weather:
        assert rows[service]["health"] != "healthy"
        logs = EpisodeCaller(ep, "t")("read_logs", {"service": service, "lines": 200})
        assert logs.ok, logs.text
        assert "external dependency" in str(logs.data)


def test_weather_outlasts_every_operation_and_the_reference_still_resolves():
    ep = _episode(0)
    service = ep.instance.spec.weather[0].service
    call = EpisodeCaller(ep, "t")
    call("restart_service", {"service": service})
    call("scale_service", {"service": service, "replicas": 12})
    described = call("describe_service", {"service": service})
    assert described.ok and described.data["health"] != "healthy"
    ref = _episode(0)
    for step in ref.instance.spec.solution:
        EpisodeCaller(ref, "t")(step.tool, dict(step.args))
    grade = ref.grade()
    assert grade.resolved and grade.total >= 0.9


def test_loudness_is_dealt_out_not_invented():
    base = load_instance(resolve("meta-sre/bad-config-push-v1").folder, 3).spec
    dealt = _instance(3).spec
    for before, after in zip(base.faults, dealt.faults, strict=True):
        for metric in ("p99_ms", "cpu", "queue_depth"):
            was = Counter(e[metric] for e in before.effects.values() if metric in e)
            now = Counter(e[metric] for e in after.effects.values() if metric in e)
            assert was == now
        assert max(e.get("error_rate", 0) for e in after.effects.values()) <= 0.4


def test_harmless_pushes_land_on_sick_rows_other_than_the_root_and_on_the_edge():
    for seed in range(8):
        spec = _instance(seed).spec
        base = load_instance(resolve("meta-sre/bad-config-push-v1").folder, seed).spec
        added = [p for p in spec.config_pushes if p not in base.config_pushes]
        keys = {k for k, _, _ in PUSHES}
        assert added and all(p.key in keys for p in added)
        assert spec.ground_truth.service not in {p.service for p in added}
        assert all(p.by.endswith("-team") for p in added)


def test_the_same_seed_builds_the_same_world():
    assert _instance(5).spec == _instance(5).spec
