"""Every scenario's reference solution is a list of calls an agent could send, as they are.

Each step of each reference (and each wrong fix) is checked against the JSON Schema the server
publishes for its tool (ListTools), with a JSON Schema validator rather than the server's own
models, then played through a real server on 127.0.0.1 by the wire-only SDK: every call
succeeds and the incident is resolved. `edit_lines` locates its line by number or by its text
(`find`); how `find` answers a text on no line, or on several, is shown here too.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from metasre.agents import ClientError, MetasreClient
from metasre.simulator import resolve, scenario_ids

from .conftest import AD

SEEDS = (0, 1, 2)


async def published_schemas(client: MetasreClient) -> dict[str, dict[str, Any]]:
    return {t["name"]: t["input_schema"] for t in await client.list_tools()}


@pytest.mark.parametrize("scenario", scenario_ids())
async def test_every_reference_call_is_valid_on_the_wire_and_solves_the_incident(server, scenario):
    async with MetasreClient(server.address) as client:
        schemas = await published_schemas(client)
        for seed in SEEDS:
            spec = resolve(scenario).instance(seed).spec
            for step in (*spec.solution, *spec.wrong_fix):
                jsonschema.Draft202012Validator(schemas[step.tool]).validate(step.args)
            handle = await client.create_session(scenario, seed=seed, seats=["reference"])
            async with client.agent(handle.id, handle.tokens["reference"]) as agent:
                for step in spec.solution:
                    result = await agent.call(step.tool, step.args)
                    assert result.ok, (seed, step.tool, result.text)
            grade = await client.get_grade(handle.id)
            assert grade["grade"]["resolved"], (seed, grade["grade"])


async def test_find_edits_the_one_line_holding_the_text_or_says_why_not(server):
    async with MetasreClient(server.address) as client:
        handle = await client.create_session(AD, seed=0, seats=["a"])
        async with client.agent(handle.id, handle.tokens["a"]) as agent:
            path = "ad_ranking/ranker.py"
            source = (await agent.call("view_file", {"path": path})).data["lines"]
            missing = await agent.call(
                "edit_lines",
                {"path": path, "action": "replace", "find": "no such text", "content": "x"},
            )
            assert not missing.ok and missing.error_code == "find_not_found"
            assert "view_file" in missing.text
            common = "import"
            holding = [n for n, line in enumerate(source, start=1) if common in line]
            assert len(holding) > 1
            several = await agent.call(
                "edit_lines",
                {"path": path, "action": "replace", "find": common, "content": "x"},
            )
            assert not several.ok and several.error_code == "find_ambiguous"
            assert several.data["lines"] == holding and "start_line" in several.text
            unique = source[-1].strip()
            assert sum(unique in line for line in source) == 1
            done = await agent.call(
                "edit_lines",
                {"path": path, "action": "insert", "find": unique, "content": "# above"},
            )
            assert done.ok and done.data["start_line"] == len(source)
            for both_or_neither in ({"start_line": 1, "find": unique}, {}):
                with pytest.raises(ClientError) as refused:
                    await agent.call(
                        "edit_lines",
                        {"path": path, "action": "replace", "content": "x", **both_or_neither},
                    )
                assert refused.value.code == "INVALID_ARGUMENT"
                assert "start_line or find" in refused.value.message
