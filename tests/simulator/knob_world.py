"""A small synthetic platform with every kind of knob, for the knob tests.

`knob_episode` writes a scenario folder (a gateway in front of checkout, which reads a
postgres) with the fault, ground truth, state checks and logs a test gives, and starts an
episode of it. No probes: the hidden checks are world-state checks only.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from string import Template
from typing import Any

from metasre.simulator import Episode
from metasre.simulator.scenarios.loader import load_instance

_PLATFORM = Template("""
[[services]]
name = "gateway"
depends_on = ["checkout"]
baseline = { error_rate = 0.002, p99_ms = 90 }
logs = ["INFO served {n} requests"]

[[services]]
name = "checkout"
code_dir = "checkout"
depends_on = ["postgres"]
baseline = { error_rate = 0.002, p99_ms = 120 }
logs = ["INFO placed {n} orders"]
disk_used_pct = 38
clock_offset_seconds = $clock
cache_warm = $warm
[services.config]
"http.timeout_ms" = 800
"retry.max_attempts" = 3
"retry.backoff_s" = 0.5
log_level = "INFO"
"search.enabled" = true

[[services]]
name = "postgres"
logs = ["INFO checkpoint complete"]
[services.config]
max_connections = 200

[[config_pushes]]
service = "checkout"
key = "retry.max_attempts"
value = 3
minutes_ago = 4000
by = "dana"

[[config_pushes]]
service = "checkout"
key = "$push_key"
value = $push_value
minutes_ago = 70
by = "lee"

[[config_pushes]]
service = "postgres"
key = "max_connections"
value = 180
minutes_ago = 20
by = "sam"

[[flags]]
name = "new_checkout"
service = "checkout"
rollout_percent = $flag_percent
minutes_ago = 15
by = "kim"
description = "the new checkout flow"

[[flags]]
name = "dark_mode"
service = "gateway"
rollout_percent = 100
minutes_ago = 9000

[[certificates]]
service = "checkout"
name = "client-to-payments"
hostnames = ["payments.internal"]
expires_in_minutes = $cert_expires

[[certificates]]
service = "gateway"
name = "ingress"
hostnames = ["shop.example.com"]
expires_in_minutes = 80000

[[queues]]
name = "orders"
service = "checkout"
depth = $queue_depth
poison = $poison
head_message_id = "msg-4411"
""")

_DEFAULTS: dict[str, Any] = {
    "clock": 0,
    "warm": True,
    "push_key": "http.timeout_ms",
    "push_value": 5,
    "flag_percent": 0,
    "cert_expires": 50000,
    "queue_depth": 3,
    "poison": False,
}

_COUNTER = itertools.count()


def toml_value(value: Any) -> str:
    """A Python value as TOML (strings, numbers, booleans, lists, flat tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def scenario_toml(
    *,
    fault: dict[str, Any],
    truth: dict[str, Any],
    state_checks: list[dict[str, Any]],
    logs: list[str],
    solution: list[dict[str, Any]] | None = None,
    step_budget: int = 30,
    **platform: Any,
) -> str:
    """The scenario.toml of a knob incident on checkout, with `platform` overriding defaults."""
    values = {k: toml_value(v) for k, v in {**_DEFAULTS, **platform}.items()}
    values["push_key"] = str({**_DEFAULTS, **platform}["push_key"])
    head = f"""
title = "checkout errors"
severity = "P2"
difficulty = "easy"
description = "[P2] checkout error rate above 5%"
sla_minutes = 30
step_budget = {step_budget}
"""
    service = truth.get("service", "checkout")
    fault_toml = f"""
[[faults]]
kind = "knob"
service = "{service}"
onset_minutes_ago = 12
params = {toml_value(fault)}
[faults.effects.{service}]
error_rate = 0.4
[faults.effects.gateway]
error_rate = 0.2
[[faults.logs]]
service = "{service}"
level = "ERROR"
lines = {toml_value(logs)}
[[faults.logs]]
service = "gateway"
level = "ERROR"
lines = ["upstream {service} failed: 503"]

[[alerts]]
service = "gateway"
metric = "error_rate"
above = 0.05
severity = "P2"
summary = "gateway 5xx above 5%"
"""
    truth_toml = "[ground_truth]\n" + "\n".join(
        f"{k} = {toml_value(v)}" for k, v in {"service": "checkout", **truth}.items()
    )
    hidden = f"\n[hidden]\nstate_checks = {toml_value(state_checks)}\n"
    report = {
        "root_cause_service": truth.get("service", "checkout"),
        "root_cause_location": truth["location"],
        "category": truth["category"],
        "remediation": truth["remediation"],
        "summary": "the knob was wrong and was put right",
    }
    steps = [*(solution or []), {"tool": "submit_report", "args": report}]
    solution_toml = "".join(
        f"\n[[solution]]\ntool = {toml_value(s['tool'])}\nargs = {toml_value(s['args'])}\n"
        for s in steps
    )
    body = head + _PLATFORM.substitute(values) + fault_toml + truth_toml + hidden + solution_toml
    # The same incident gets the same id, and so the same start time and noise.
    digest = hashlib.sha256(body.encode()).hexdigest()[:10]
    return f'id = "meta-sre/knob-test-{digest}-v1"\n' + body


def knob_episode(tmp_path: Path, **kwargs: Any) -> Episode:
    """An episode of `scenario_toml(**kwargs)`, written under `tmp_path`."""
    folder = tmp_path / f"knob_{next(_COUNTER)}"
    (folder / "history" / "01-initial" / "checkout").mkdir(parents=True)
    (folder / "scenario.toml").write_text(scenario_toml(**kwargs), encoding="utf-8")
    commit = folder / "history" / "01-initial"
    (commit / "commit.toml").write_text(
        'author = "dana"\nmessage = "initial"\nminutes_ago = 9000\n', encoding="utf-8"
    )
    (commit / "checkout" / "app.py").write_text("TIMEOUT_MS = 800\n", encoding="utf-8")
    return Episode(load_instance(folder, 0))


__all__ = ["knob_episode", "scenario_toml", "toml_value"]
