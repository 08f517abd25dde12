"""meta-sre/dependency-bump-v1: the seed chooses the service, the vendored library and what
its new major release changed; the trace, the blame and the fix follow."""

from __future__ import annotations

import pytest

from metasre.simulator import Episode
from metasre.simulator.scenarios.registry import resolve

FAMILY = "meta-sre/dependency-bump-v1"
STRUCTURES = range(29)
"""Seeds 0-28 meet each of the 29 structures once (one stratified cycle)."""


def test_the_seed_chooses_service_library_and_change():
    entry = resolve(FAMILY)
    keys, services, libs, changes = set(), set(), set(), set()
    for seed in STRUCTURES:
        fault = entry.instance(seed).values["fault"]
        keys.add(fault["key"])
        services.add(fault["service"])
        libs.add(fault["lib"])
        changes.add(fault["key"].rsplit("-", 2)[-2] + "-" + fault["key"].rsplit("-", 1)[-1])
    assert len(keys) == 29
    assert len(services) == 7 and libs == {"moneyfmt", "isotime", "skucodes", "tmpl"}
    assert changes == {
        "renamed-keyword",
        "stricter-parsing",
        "removed-function",
        "changed-default",
        "return-type",
    }


@pytest.mark.parametrize("seed", STRUCTURES)
def test_the_logged_frame_is_real_and_blamed_on_the_bump(seed):
    ep = Episode.make(FAMILY, seed)
    fault = ep.instance.values["fault"]
    text = ep.instance.tree.files[fault["file"]]
    line = text.split("\n")[fault["trace_line"] - 1]
    logged = [entry for b in ep.instance.spec.faults[0].logs for entry in b.lines]
    frame = next(entry for entry in logged if "File " in entry)
    assert f"line {fault['trace_line']}," in frame
    assert line.strip() in "\n".join(logged)
    blame = ep.apply(
        "a",
        "git_blame",
        {"path": fault["file"], "start_line": fault["trace_line"], "end_line": fault["trace_line"]},
    ).output.data["lines"][0]
    assert blame["message"].startswith(f"{fault['pkg']}: bump vendored {fault['lib']}")


@pytest.mark.parametrize("seed", [0, 7, 15])
def test_a_rollback_mitigates_but_does_not_resolve(seed):
    ep = Episode.make(FAMILY, seed)
    service = ep.instance.spec.ground_truth.service
    assert ep.apply("a", "rollback_deployment", {"service": service}).output.ok
    grade = ep.grade()
    assert not grade.resolved
    assert grade.component("sla").detail.startswith("mitigated")
    assert not any(v for k, v in grade.fail_to_pass.items() if k.startswith("hidden/"))


@pytest.mark.parametrize("seed", [2, 11])
def test_moving_the_pin_back_alone_resolves_nothing(seed):
    ep = Episode.make(FAMILY, seed)
    fix = ep.instance.values["fault"]["fix_pin"]
    assert ep.apply("a", "edit_lines", fix).output.ok
    assert not ep.grade().resolved
