"""Knobs: services' runtime settings, the settings tools, the `knob` fault kind and `knob_ok`.

Each incident is a small synthetic platform (`knob_world`): gateway -> checkout -> postgres,
with config, pushes, flags, certificates and a queue on checkout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from knob_world import knob_episode, scenario_toml
from pydantic import ValidationError

from metasre.simulator import TOOLS
from metasre.simulator.errors import InvalidToolCallError
from metasre.simulator.knobs import CERTIFICATE_LIFETIME_MINUTES
from metasre.simulator.rewards import UNNEEDED_OPERATION
from metasre.simulator.scenarios.spec import KnobCondition, parse_knob

# -- one incident per knob kind: (platform overrides, fault, truth, the remedy's calls) --------

CASES: dict[str, dict[str, Any]] = {
    "bad_config": {
        "platform": {},
        "fault": {"knob": "config:http.timeout_ms", "bad": [5]},
        "truth": {
            "location": "config:http.timeout_ms",
            "category": "bad_config",
            "remediation": "rollback_config",
        },
        "remedy": [("rollback_config", {"service": "checkout"})],
    },
    "retry_storm": {
        "platform": {"push_key": "retry.max_attempts", "push_value": 12},
        "fault": {"knob": "config:retry.max_attempts", "above": 3},
        "truth": {
            "location": "config:retry.max_attempts",
            "category": "retry_storm",
            "remediation": "rollback_config",
        },
        "remedy": [
            ("set_config", {"service": "checkout", "key": "retry.max_attempts", "value": 3})
        ],
    },
    "feature_flag": {
        "platform": {"flag_percent": 100},
        "fault": {"knob": "flag:new_checkout", "above": 0},
        "truth": {
            "location": "flag:new_checkout",
            "category": "feature_flag",
            "remediation": "set_feature_flag",
        },
        "remedy": [("set_feature_flag", {"flag": "new_checkout", "rollout_percent": 0})],
    },
    "expired_certificate": {
        "platform": {"cert_expires": -14},
        "fault": {"knob": "certificate:client-to-payments", "expired": True},
        "truth": {
            "location": "certificate:client-to-payments",
            "category": "expired_certificate",
            "remediation": "renew_certificate",
        },
        "remedy": [
            ("renew_certificate", {"service": "checkout", "certificate": "client-to-payments"})
        ],
    },
    "clock_skew": {
        "platform": {"clock": -95},
        "fault": {"knob": "clock", "above": 30},
        "truth": {
            "location": "service:checkout",
            "category": "clock_skew",
            "remediation": "sync_clock",
        },
        "remedy": [("sync_clock", {"service": "checkout"})],
    },
    "disk_full": {
        "platform": {"push_key": "log_level", "push_value": "DEBUG"},
        "fault": {"knob": "disk", "above": 95},
        "truth": {
            "location": "config:log_level",
            "category": "disk_full",
            "remediation": "clean_disk",
        },
        "checks": [
            {
                "name": "log level not DEBUG",
                "kind": "knob_ok",
                "service": "checkout",
                "knob": "config:log_level",
                "bad": ["DEBUG"],
            }
        ],
        "remedy": [
            ("set_config", {"service": "checkout", "key": "log_level", "value": "INFO"}),
            ("clean_disk", {"service": "checkout"}),
        ],
    },
    "consumer_lag": {
        "platform": {"poison": True, "queue_depth": 900},
        "fault": {"knob": "queue:orders", "poison": True},
        "truth": {
            "location": "queue:orders",
            "category": "consumer_lag",
            "remediation": "skip_message",
        },
        "remedy": [("skip_message", {"queue": "orders"})],
    },
    "cache_stampede": {
        "platform": {"warm": False},
        "fault": {"knob": "cache", "cold": True},
        "truth": {
            "location": "service:checkout",
            "category": "cache_stampede",
            "remediation": "warm_cache",
        },
        "remedy": [("warm_cache", {"service": "checkout"})],
    },
}

WRONG = [
    ("restart_service", {"service": "checkout"}),
    ("rollback_config", {"service": "postgres"}),
    ("scale_service", {"service": "checkout", "replicas": 4}),
]
"""Plausible wrong remedies: none of them touches the knob any case is about."""


def episode(tmp_path: Path, name: str, **extra: Any):
    case = CASES[name]
    own = {"name": "knob healthy", "kind": "knob_ok", "service": "checkout", **case["fault"]}
    checks = [*case.get("checks", []), own]
    return knob_episode(
        tmp_path,
        fault=case["fault"],
        truth=case["truth"],
        state_checks=checks,
        logs=["ERROR request failed"],
        **{**case["platform"], **extra},
    )


def report(ep) -> dict[str, Any]:
    return dict(ep.instance.spec.solution[-1].args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_remedy_cures_the_fault_resolves_and_grades_full(tmp_path, name):
    ep = episode(tmp_path, name)
    assert ep.faults[0].active
    for tool, args in CASES[name]["remedy"]:
        step = ep.apply("a", tool, args)
        assert step.ok, step.output.text
        assert step.reward.components["operation"] < 0
    assert not ep.faults[0].active
    grade = ep.apply("a", "submit_report", report(ep)).grade
    assert grade is not None and grade.resolved, grade
    assert grade.total == 1.0, grade.components
    assert "unneeded_operations" not in {c.name for c in grade.components}


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrong_remedies_leave_the_fault_and_cost_the_grade(tmp_path, name):
    ep = episode(tmp_path, name)
    for tool, args in WRONG:
        assert ep.apply("a", tool, args).ok
        assert ep.faults[0].active, tool
    grade = ep.apply("a", "submit_report", report(ep)).grade
    assert grade is not None and not grade.resolved
    unneeded = grade.component("unneeded_operations")
    assert unneeded.value == pytest.approx(UNNEEDED_OPERATION * len(WRONG))
    # The report claims a remedy nobody applied.
    assert "claimed but not done" in grade.component("report").detail


def test_the_disk_refills_after_a_clean_while_the_level_is_still_debug(tmp_path):
    ep = episode(tmp_path, "disk_full")
    knobs = ep.world.knobs.of("checkout")
    assert knobs.disk_used_pct(0) == 100.0  # 38% + 70 min of DEBUG, capped
    cleaned_at = ep.clock
    out = ep.apply("a", "clean_disk", {"service": "checkout"}).output
    assert out.data["disk_used_pct"] == 38.0 and out.data["disk_used_before_pct"] == 100.0
    assert not ep.faults[0].active  # for now: it fills a point a minute
    assert knobs.disk_used_pct(cleaned_at + 10) == pytest.approx(38.0 + 10)
    assert knobs.disk_used_pct(cleaned_at + 100) == 100.0
    # Claiming the remedy without fixing the level: the check on the level fails.
    grade = ep.apply("a", "submit_report", report(ep)).grade
    assert grade is not None and not grade.resolved
    assert grade.fail_to_pass["state::log level not DEBUG"] is False
    assert "claimed but not done" in grade.component("report").detail


def test_a_disk_fault_comes_back_when_the_disk_refills(tmp_path):
    ep = episode(tmp_path, "disk_full", step_budget=200)
    ep.apply("a", "clean_disk", {"service": "checkout"})
    assert not ep.faults[0].active
    for _ in range(150):  # 150 x 0.5 minutes of looking: the disk passes 95% again
        ep.apply("a", "get_config", {"service": "checkout"})
        if ep.faults[0].active:
            break
    assert ep.faults[0].active and 57 <= ep.clock < 58  # 38% + 57.5 minutes of DEBUG


def test_fixing_the_level_first_stops_the_filling(tmp_path):
    ep = episode(tmp_path, "disk_full")
    ep.apply("a", "set_config", {"service": "checkout", "key": "log_level", "value": "INFO"})
    assert ep.faults[0].active  # the disk is still full
    ep.apply("a", "clean_disk", {"service": "checkout"})
    knobs = ep.world.knobs.of("checkout")
    assert knobs.disk_used_pct(ep.clock + 500) == 38.0


def test_a_restart_cools_the_cache_and_does_not_cure_a_stampede(tmp_path):
    ep = episode(tmp_path, "cache_stampede")
    ep.apply("a", "restart_service", {"service": "checkout"})
    assert ep.faults[0].active
    ep.apply("a", "warm_cache", {"service": "checkout"})
    assert not ep.faults[0].active
    ep.apply("a", "restart_service", {"service": "checkout"})
    assert ep.faults[0].active  # the restart emptied it again
    assert ep.world.knobs.of("checkout").cache_warm is False


# -- get_config: what an SRE would see, and nothing more -------------------------------------


def test_get_config_shows_settings_and_history_without_marking_the_culprit(tmp_path):
    ep = episode(tmp_path, "bad_config", cert_expires=-14, clock=-95, poison=True)
    step = ep.apply("a", "get_config", {"service": "checkout"})
    out = step.output
    assert step.ok and step.minutes == 0.5 and TOOLS["get_config"].read_only
    data = out.data
    assert data["config"]["http.timeout_ms"] == 5
    newest = data["pushes"][0]
    assert (newest["key"], newest["old"], newest["new"], newest["by"]) == (
        "http.timeout_ms",
        800,
        5,
        "lee",
    )
    assert [f["name"] for f in data["flags"]] == ["new_checkout"]
    cert = data["certificates"][0]
    assert cert["expired"] and cert["expires_in_minutes"] == pytest.approx(-14.0)
    assert data["clock_offset_seconds"] == -95
    assert data["queues"] == [{"name": "orders", "depth": 3, "head_message_id": "msg-4411"}]
    assert "EXPIRED 14 min ago" in out.text and "-95s" in out.text
    assert '"http.timeout_ms": 800 -> 5 by lee' not in out.text
    assert "http.timeout_ms: 800 -> 5 by lee" in out.text
    # Nothing names the fault: no verdicts, no 'poison', no 'bad', no scenario words.
    lowered = out.text.lower()
    for word in ("poison", "bad", "root", "fault", "suspect", "culprit", "incident"):
        assert word not in lowered, word
    assert "poison" not in str(data).lower()
    # A healthy push on another service looks the same as the bad one: only the facts.
    other = ep.apply("a", "get_config", {"service": "postgres"}).output.data["pushes"][0]
    assert set(other) == set(newest)


def test_get_config_of_an_unknown_service_lists_the_services(tmp_path):
    ep = episode(tmp_path, "bad_config")
    out = ep.apply("a", "get_config", {"service": "chekout"}).output
    assert out.error == "unknown_service" and "checkout" in out.text


def test_the_settings_changes_are_world_events(tmp_path):
    ep = episode(tmp_path, "bad_config", cert_expires=-14, clock=-95, poison=True)
    calls = [
        ("set_config", {"service": "checkout", "key": "retry.backoff_s", "value": 1}),
        ("rollback_config", {"service": "checkout"}),
        ("set_feature_flag", {"flag": "dark_mode", "rollout_percent": 50}),
        ("renew_certificate", {"service": "checkout", "certificate": "client-to-payments"}),
        ("sync_clock", {"service": "checkout"}),
        ("clean_disk", {"service": "checkout"}),
        ("skip_message", {"queue": "orders"}),
        ("warm_cache", {"service": "checkout"}),
    ]
    for tool, args in calls:
        step = ep.apply("a", tool, args)
        assert step.ok and TOOLS[tool].operates, (tool, step.output.text)
        assert step.output.operation is not None
    events = ep.apply("a", "get_events", {"since_minutes": 60}).output.data["events"]
    kinds = [e["kind"] for e in events if e["by"] == "a"]
    assert kinds == [
        "config",
        "config_rollback",
        "flag",
        "certificate",
        "clock_sync",
        "disk_clean",
        "message_skip",
        "cache_warm",
    ]
    # Before the page: the pushes and the flag changes are on the timeline too.
    before = ep.apply("a", "get_events", {"since_minutes": 10_000}).output.data["events"]
    assert any(e["kind"] == "config" and e["by"] == "lee" for e in before)
    assert any(e["kind"] == "flag" and e["by"] == "kim" for e in before)
    # Reloads, rotations and cleanings are short outages; a flag or a clock step is not.
    services = [(d.service, d.metric) for d in ep.world.disruptions]
    assert services.count(("checkout", "error_rate")) == 4
    assert ("checkout", "cpu") in services


def test_set_config_refuses_unknown_keys_and_other_types(tmp_path):
    ep = episode(tmp_path, "bad_config")
    out = ep.apply("a", "set_config", {"service": "checkout", "key": "timeout", "value": 1}).output
    assert out.error == "unknown_config_key" and "http.timeout_ms" in out.data["keys"]
    for value in ("800", True, 0.5):
        args = {"service": "checkout", "key": "http.timeout_ms", "value": value}
        out = ep.apply("a", "set_config", args).output
        assert out.error == "config_type_mismatch", value
    out = ep.apply(
        "a", "set_config", {"service": "checkout", "key": "search.enabled", "value": 1}
    ).output
    assert out.error == "config_type_mismatch"
    # JSON sends whole numbers as floats; a float key takes an int.
    ok = ep.apply(
        "a", "set_config", {"service": "checkout", "key": "http.timeout_ms", "value": 900.0}
    )
    assert ok.ok and ep.world.knobs.of("checkout").config["http.timeout_ms"] == 900
    assert isinstance(ep.world.knobs.of("checkout").config["http.timeout_ms"], int)
    ok = ep.apply("a", "set_config", {"service": "checkout", "key": "retry.backoff_s", "value": 2})
    assert ok.ok and ep.world.knobs.of("checkout").config["retry.backoff_s"] == 2.0
    assert ep.apply("a", "set_config", {"service": "x", "key": "k", "value": 1}).output.error == (
        "unknown_service"
    )
    with pytest.raises(InvalidToolCallError):
        ep.apply("a", "set_config", {"service": "checkout", "key": "k", "value": "x" * 300})


def test_rollback_config_walks_back_the_pushes_and_stops(tmp_path):
    ep = episode(tmp_path, "bad_config")
    config = ep.world.knobs.of("checkout").config
    first = ep.apply("a", "rollback_config", {"service": "checkout"}).output
    assert first.data == {"service": "checkout", "key": "http.timeout_ms", "old": 5, "new": 800}
    second = ep.apply("a", "rollback_config", {"service": "checkout"}).output
    assert second.data["key"] == "retry.max_attempts" and config["retry.max_attempts"] == 3
    third = ep.apply("a", "rollback_config", {"service": "checkout"}).output
    assert third.error == "no_config_push" and "no config push" in third.text
    assert config["http.timeout_ms"] == 800


def test_unknown_flags_certificates_and_queues_list_the_real_ones(tmp_path):
    ep = episode(tmp_path, "bad_config", queue_depth=0)
    flag = ep.apply("a", "set_feature_flag", {"flag": "new-checkout", "rollout_percent": 0})
    assert flag.output.error == "unknown_flag" and "new_checkout" in flag.output.text
    cert = ep.apply("a", "renew_certificate", {"service": "checkout", "certificate": "ingress"})
    assert cert.output.error == "unknown_certificate"
    assert cert.output.data["certificates"] == ["client-to-payments"]
    queue = ep.apply("a", "skip_message", {"queue": "order"})
    assert queue.output.error == "unknown_queue" and "orders" in queue.output.text
    empty = ep.apply("a", "skip_message", {"queue": "orders"})
    assert empty.output.error == "queue_empty"
    with pytest.raises(InvalidToolCallError):
        ep.apply("a", "set_feature_flag", {"flag": "new_checkout", "rollout_percent": 101})
    assert all(s is None for s in (flag.output.operation, cert.output.operation))


def test_renewing_and_skipping_do_what_they_say(tmp_path):
    ep = episode(tmp_path, "consumer_lag", cert_expires=-14)
    ep.apply("a", "renew_certificate", {"service": "checkout", "certificate": "client-to-payments"})
    cert = ep.world.knobs.certificates[("checkout", "client-to-payments")]
    assert cert.expires_at == pytest.approx(ep.clock - 2 + CERTIFICATE_LIFETIME_MINUTES)
    assert cert.hostnames == ("payments.internal",)
    out = ep.apply("a", "skip_message", {"queue": "orders"}).output
    queue = ep.world.knobs.queues["orders"]
    assert out.data["message_id"] == "msg-4411" and queue.dead_lettered == ["msg-4411"]
    assert queue.depth == 899 and not queue.poison
    assert queue.head_message_id != "msg-4411"


def test_a_certificate_expires_at_its_minute_of_the_episode(tmp_path):
    ep = episode(tmp_path, "bad_config", cert_expires=3)
    cert = ep.world.knobs.certificates[("checkout", "client-to-payments")]
    assert not cert.expired(2.9) and cert.expired(3.0)
    text = ep.apply("a", "get_config", {"service": "checkout"}).output.text
    assert "expires in 3 min" in text  # read at minute 0


def test_the_wrong_key_or_flag_is_an_unneeded_operation(tmp_path):
    ep = episode(tmp_path, "bad_config")
    ep.apply(
        "a", "set_config", {"service": "checkout", "key": "retry.max_attempts", "value": 3}
    )  # the right tool, the right service, the wrong key
    ep.apply("a", "set_config", {"service": "checkout", "key": "http.timeout_ms", "value": 800})
    # A repeat of the remedy.
    ep.apply("a", "set_config", {"service": "checkout", "key": "http.timeout_ms", "value": 800})
    grade = ep.apply("a", "submit_report", report(ep)).grade
    assert grade is not None and grade.resolved
    detail = grade.component("unneeded_operations").detail
    assert "config:retry.max_attempts" in detail and "again" in detail
    assert grade.component("unneeded_operations").value == pytest.approx(2 * UNNEEDED_OPERATION)

    flags = episode(tmp_path, "feature_flag")
    flags.apply("a", "set_feature_flag", {"flag": "dark_mode", "rollout_percent": 0})
    flags.apply("a", "set_feature_flag", {"flag": "new_checkout", "rollout_percent": 0})
    grade = flags.apply("a", "submit_report", report(flags)).grade
    assert grade is not None and grade.resolved
    assert "dark_mode" in grade.component("unneeded_operations").detail


def test_half_a_two_step_remedy_is_not_the_remedy_done(tmp_path):
    ep = episode(tmp_path, "disk_full")
    ep.apply("a", "set_config", {"service": "checkout", "key": "log_level", "value": "INFO"})
    grade = ep.apply("a", "submit_report", report(ep)).grade
    assert grade is not None and "claimed but not done" in grade.component("report").detail


def test_episodes_are_deterministic(tmp_path):
    def play(ep) -> list[Any]:
        out = []
        for tool, args in [
            ("get_config", {"service": "checkout"}),
            ("set_config", {"service": "checkout", "key": "log_level", "value": "INFO"}),
            ("clean_disk", {"service": "checkout"}),
            ("read_logs", {"service": "checkout"}),
            ("get_events", {}),
        ]:
            step = ep.apply("a", tool, args)
            out.append((step.output.text, dict(step.output.data), step.reward.total))
        return out

    assert play(episode(tmp_path, "disk_full")) == play(episode(tmp_path, "disk_full"))


# -- the spec: knob names are checked when the scenario loads ---------------------------------


def test_parse_knob_and_conditions_name_what_is_wrong():
    assert parse_knob("config:http.timeout_ms") == ("config", "http.timeout_ms")
    assert str(parse_knob("disk")) == "disk"
    for text in ("conf:x", "config", "disk:x", "flag:"):
        with pytest.raises(ValueError, match="knob"):
            parse_knob(text)
    with pytest.raises(ValidationError, match="exactly one predicate of \\['above'\\]"):
        KnobCondition(knob="clock", bad=[1])
    with pytest.raises(ValidationError, match="exactly one predicate"):
        KnobCondition(knob="config:x", above=1, below=5)
    with pytest.raises(ValidationError, match="need a knob"):
        KnobCondition(above=1)


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ({"knob": "config:http.timeout", "bad": [5]}, "no config key 'http.timeout'"),
        ({"knob": "flag:new-checkout", "above": 0}, "no flag 'new-checkout'"),
        ({"knob": "certificate:ingress", "expired": True}, "no certificate 'ingress'"),
        ({"knob": "queue:order", "poison": True}, "consumes no queue 'order'"),
        ({"knob": "dsk", "above": 95}, "unknown knob 'dsk'"),
        ({"knob": "disk", "poison": True}, "exactly one predicate"),
    ],
)
def test_a_typo_in_a_knob_is_an_error_when_the_scenario_loads(tmp_path, fault, error):
    with pytest.raises(Exception, match=error):
        knob_episode(
            tmp_path,
            fault=fault,
            truth=CASES["bad_config"]["truth"],
            state_checks=[{"name": "x", "kind": "healthy", "service": "checkout"}],
            logs=["x"],
        )


def test_pushes_must_name_a_declared_key_of_the_same_type(tmp_path):
    for platform, error in [
        ({"push_key": "timeout"}, "has no config key 'timeout'"),
        ({"push_value": "five"}, "is not a int like 800"),
    ]:
        with pytest.raises(Exception, match=error):
            knob_episode(
                tmp_path,
                fault={"knob": "cache", "cold": True},
                truth=CASES["bad_config"]["truth"],
                state_checks=[{"name": "x", "kind": "healthy", "service": "checkout"}],
                logs=["x"],
                **platform,
            )


def test_a_knob_ok_check_needs_its_knob_and_only_it_has_one():
    text = scenario_toml(
        fault={"knob": "cache", "cold": True},
        truth=CASES["bad_config"]["truth"],
        state_checks=[{"name": "x", "kind": "knob_ok", "service": "checkout"}],
        logs=["x"],
    )
    assert "knob_ok" in text
    from metasre.simulator.scenarios.spec import StateCheck

    with pytest.raises(ValidationError, match="goes with kind 'knob_ok'"):
        StateCheck(name="x", kind="knob_ok", service="s")
    with pytest.raises(ValidationError, match="goes with kind 'knob_ok'"):
        StateCheck(name="x", kind="healthy", service="s", knob="cache", cold=True)


def test_a_knob_fault_must_hold_at_the_page(tmp_path):
    with pytest.raises(Exception, match="does not hold bad = \\[5\\] at the page \\(now 10\\)"):
        knob_episode(
            tmp_path,
            fault={"knob": "config:http.timeout_ms", "bad": [5]},
            truth=CASES["bad_config"]["truth"],
            state_checks=[{"name": "x", "kind": "healthy", "service": "checkout"}],
            logs=["x"],
            push_value=10,
        )
