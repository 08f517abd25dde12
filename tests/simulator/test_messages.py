"""Every tool a message tells an agent to use exists: LLM agents follow these texts.

Issue 17: an error said "list it with list_dir", and there is no such tool (it is list_files).
Every scenario is driven into the world's refusals and the schema's; each text that names
something to call ("with X", "use X", "call X", "try X", "run X", "X(") must name a tool.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from metasre.simulator import TOOLS, Episode, scenario_ids
from metasre.simulator.errors import SimulatorError

_CALLED = re.compile(r"\b(?:with|use|call|try|run)\s+`?([a-z]+(?:_[a-z]+)+)`?")
_PARENS = re.compile(r"\b([a-z]+(?:_[a-z]+)+)\(")

_BAD_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("view_file", {"path": "nope/missing.py"}),
    ("view_file", {"path": ""}),
    ("view_file", {"path": "tests"}),
    ("view_file", {"path": "../etc/passwd"}),
    ("list_files", {"path": "nope"}),
    ("edit_lines", {"path": "nope.py", "action": "replace", "start_line": 1, "content": "x"}),
    ("edit_lines", {"path": "tests/x.py", "action": "insert", "start_line": 1, "content": "x"}),
    ("read_logs", {"service": "no-such-service"}),
    ("query_metrics", {"service": "no-such-service", "metric": "cpu"}),
    ("describe_service", {"service": "no-such-service"}),
    ("git_show", {"commit": "deadbeef"}),
    ("git_blame", {"path": "nope.py"}),
    ("rollback_deployment", {"service": "no-such-service"}),
    ("rollback_migration", {"service": "no-such-service", "migration": "x"}),
    ("restart_service", {"service": "no-such-service"}),
    ("scale_service", {"service": "no-such-service", "replicas": 2}),
    ("run_tests", {"suite": "unit", "path": "nowhere"}),
    ("send_message", {"text": "hi", "to": ["nobody"]}),
    ("no_such_tool", {}),
    ("read_logs", {"service": 5}),
]


@pytest.mark.parametrize("scenario", sorted(scenario_ids()))
def test_every_tool_a_message_names_exists(scenario: str) -> None:
    texts: list[str] = []
    for tool, args in _BAD_CALLS:
        ep = Episode.make(scenario, 0)
        try:
            step = ep.apply("a", tool, args)
        except (SimulatorError, ValueError) as exc:  # refused by the schema or the registry
            texts.append(str(exc))
        else:
            texts += [step.output.text, str(step.output.error or "")]
    named = {m for text in texts for m in (*_CALLED.findall(text), *_PARENS.findall(text))}
    assert named, "the refusals should tell the agent what to do"
    assert named <= set(TOOLS), sorted(named - set(TOOLS))
