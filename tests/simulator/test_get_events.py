"""get_events: the platform's change timeline, from the releases before the page to every
operation and hotfix since."""

from __future__ import annotations

import pytest

from metasre.simulator import TOOLS, Episode, InvalidToolCallError, scenario_ids

PAY = "meta-sre/payment-bad-deploy-v2"
MIGRATION = "meta-sre/migration-cascade-v3"


def test_it_lists_the_releases_before_the_page_oldest_first():
    ep = Episode.make(PAY, 0)
    out = ep.apply("a", "get_events", {"since_minutes": 43_200}).output
    assert out.ok
    events = out.data["events"]
    minutes = [e["minute"] for e in events]
    assert minutes == sorted(minutes) and all(m < 0 for m in minutes)
    assert {e["kind"] for e in events} >= {"deploy"}
    # The release the ground truth blames is on the timeline, with its version.
    svc = ep.world.services[ep.instance.spec.ground_truth.service]
    assert any(e["service"] == svc.name and svc.version in e["text"] for e in events)
    assert out.text.splitlines()[0].endswith("oldest first:")
    assert len(out.text.splitlines()) == len(events) + 1


def test_the_window_the_service_and_the_kind_narrow_it():
    ep = Episode.make(PAY, 0)
    everything = ep.apply("a", "get_events", {"since_minutes": 43_200}).output.data["events"]
    recent = ep.apply("a", "get_events", {"since_minutes": 30}).output.data["events"]
    assert recent == [e for e in everything if e["minute"] >= ep.clock - 30 - 0.2]
    one = everything[-1]["service"]
    only = ep.apply("a", "get_events", {"service": one, "since_minutes": 43_200}).output
    assert {e["service"] for e in only.data["events"]} == {one}
    none = ep.apply("a", "get_events", {"kind": "hotfix"}).output
    assert none.ok and none.data["events"] == [] and none.text.endswith(": none")
    newest = ep.apply("a", "get_events", {"since_minutes": 43_200, "limit": 1}).output
    assert newest.data["events"] == everything[-1:]


def test_operations_and_hotfixes_show_up_with_who_made_them():
    ep = Episode.make(PAY, 0)
    service = ep.instance.spec.ground_truth.service
    ep.apply("alice", "restart_service", {"service": service})
    ep.apply("bob", "scale_service", {"service": service, "replicas": 5})
    events = ep.apply("a", "get_events", {"service": service}).output.data["events"]
    assert [(e["kind"], e["by"]) for e in events[-2:]] == [("restart", "alice"), ("scale", "bob")]
    assert events[-1]["minute"] > 0


def test_migrations_applied_before_the_page_are_changes():
    ep = Episode.make(MIGRATION, 0)
    applied = {m.id for m in ep.world.migrations if m.applied_at >= -43_200}
    assert applied
    events = ep.apply("a", "get_events", {"kind": "migration", "since_minutes": 43_200})
    assert {e["text"].split()[2] for e in events.output.data["events"]} == applied


def test_an_unknown_service_is_a_world_error_and_bad_arguments_are_refused():
    ep = Episode.make(PAY, 0)
    out = ep.apply("a", "get_events", {"service": "nope"}).output
    assert out.error == "unknown_service" and "services are:" in out.text
    with pytest.raises(InvalidToolCallError):
        ep.apply("a", "get_events", {"kind": "reboot"})


def test_its_schema_and_traits():
    tool = TOOLS["get_events"]
    schema = tool.json_schema()
    assert set(schema["properties"]) == {"service", "kind", "since_minutes", "limit"}
    assert schema["additionalProperties"] is False and "required" not in schema
    assert tool.read_only and tool.inline and not tool.ends_episode


@pytest.mark.parametrize("scenario_id", scenario_ids())
def test_it_changes_nothing_it_reads(scenario_id):
    ep = Episode.make(scenario_id, 0)
    before = ep.telemetry.version
    step = ep.apply("a", "get_events", {})
    assert step.ok and ep.telemetry.version == before
    assert step.reward.components == {"step_cost": step.reward.total}
