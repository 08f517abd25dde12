"""Every tool's results match the output and error schemas ListTools publishes (issue 28, item 7).

A client built from the protos alone reads `ToolResult.data` by `ToolSpec.output_schema` (ok
true) and `ToolSpec.error_schema` (ok false). Here such a client sweeps every tool over a real
server on families that hold every kind of thing a tool reads or changes (releases, migrations,
config pushes, flags, certificates, queues), finds its arguments in earlier results as an agent
would, provokes each refusal a tool has, and validates every result's data (Draft 2020-12) against
the published schema. The sweep must see every tool succeed and every tool that can be refused
refused, so a tool added later, or a handler whose data drifts from its model, fails here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from google.protobuf import json_format

from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2

from .conftest import TIMEOUT, owned_channel, struct

FAMILIES = (
    "meta-sre/payment-bad-deploy-v2",  # releases and migrations
    "meta-sre/bad-config-push-v1",  # config keys and pushes
    "meta-sre/consumer-lag-v1",  # queues
    "meta-sre/feature-flag-rollout-v1",  # flags
    "meta-sre/tls-cert-expiry-v1",  # certificates
)

REPORT = {
    "root_cause_service": "nobody",
    "root_cause_location": "service:nobody",
    "category": "bad_deployment",
    "remediation": "rollback_deployment",
    "summary": "a report filed to see the shape of submit_report's data",
}


def _plain(message: Any) -> Any:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


class Sweep:
    """One seat's calls over CallTool; a new session of the same instance when steps run out."""

    def __init__(self, channel: Any, scenario: str, schemas: dict[str, tuple[Any, Any]]) -> None:
        self.channel = channel
        self.scenario = scenario
        self.schemas = schemas
        self.session = ""
        self.token = ""
        self.steps_left = 0
        self.seen: set[tuple[str, bool]] = set()

    async def _fresh(self) -> None:
        control = self.channel.control
        reply = await control.CreateSession(
            control_pb2.CreateSessionRequest(
                scenario_id=self.scenario, seats=[common_pb2.SeatConfig(agent_id="a")]
            ),
            timeout=TIMEOUT,
        )
        self.session = reply.session.session_id
        self.token = reply.tokens[0].join_token
        self.steps_left = 10**6

    async def call(self, tool: str, **args: Any) -> tuple[bool, dict[str, Any]]:
        """The call's ok and data, once its data was checked against the published schema."""
        if self.steps_left <= 1:
            await self._fresh()
        reply = await self.channel.agent.CallTool(
            agent_pb2.CallToolRequest(
                session_id=self.session,
                token=self.token,
                call=agent_pb2.ToolCall(call_id="", tool=tool, args=struct(args)),
            ),
            timeout=TIMEOUT,
        )
        result = reply.result
        self.steps_left = result.observation.steps_left
        data = _plain(result.data)
        output, error = self.schemas[tool]
        try:
            jsonschema.validate(
                data, output if result.ok else error, jsonschema.Draft202012Validator
            )
        except jsonschema.ValidationError as exc:
            pytest.fail(
                f"{self.scenario} {tool}({args}) ok={result.ok} {result.error_code}: its data "
                f"breaks the published {'output' if result.ok else 'error'} schema at "
                f"{list(exc.absolute_path)}: {exc.message}"
            )
        self.seen.add((tool, result.ok))
        return result.ok, data


def _files(entries: list[str], folder: str) -> Iterator[str]:
    for e in entries:
        if not e.endswith("/"):
            yield f"{folder}{e}" if folder else e


async def sweep(s: Sweep) -> None:
    """Every tool, succeeding and refused, with arguments read from earlier results."""
    _, root = await s.call("list_files")
    await s.call("list_files", path="no/such/folder")
    folder = next(e for e in root["entries"] if e.endswith("/") and e != "tests/")
    _, listing = await s.call("list_files", path=folder)
    path = next(p for p in _files(listing["entries"], folder) if p.endswith(".py"))
    _, viewed = await s.call("view_file", path=path)
    await s.call("view_file", path="no_such_file.py")
    await s.call("get_alerts")
    _, graph = await s.call("check_dependencies")
    await s.call("check_dependencies", service="no-such-service")
    services = [row["service"] for row in graph["services"]]
    described = {}
    for service in services:
        _, described[service] = await s.call("describe_service", service=service)
    await s.call("describe_service", service="no-such-service")
    await s.call("read_logs", service=services[0], lines=5)
    await s.call("read_logs", service="no-such-service")
    await s.call("query_metrics", service=services[0], metric="error_rate")
    await s.call("query_metrics", service="no-such-service", metric="cpu")
    await s.call("get_events")
    await s.call("get_events", service="no-such-service")
    _, log = await s.call("git_log", limit=3)
    await s.call("git_log", path="../outside")
    await s.call("git_show", commit=log["commits"][0]["sha"])
    await s.call("git_show", commit="ffffffffff")
    await s.call("git_blame", path=path, start_line=1, end_line=3)
    await s.call("git_blame", path="no_such_file.py")
    await s.call("git_diff")
    await s.call("git_diff", path="no/such/path.py")
    await s.call("run_tests", suite="unit")
    await s.call("run_tests", suite="security", path="no/such/folder")
    configs = {}
    for service in services:
        _, configs[service] = await s.call("get_config", service=service)
    await s.call("get_config", service="no-such-service")
    await s.call("ask_hint")
    await s.call("send_message", text="what each tool's data looks like")

    # Edits: a find on no line, a find on many, then one that lands.
    lines = viewed["lines"]
    await s.call(
        "edit_lines", path=path, action="insert", find="no line holds this text", content=""
    )
    common = next((t for t in lines if t.strip() and lines.count(t) > 1), None)
    if common is not None:
        await s.call("edit_lines", path=path, action="insert", find=common, content="# x")
    await s.call("edit_lines", path="no_such_file.py", action="insert", start_line=1, content="")
    await s.call("edit_lines", path=path, action="insert", start_line=1, content="# swept")

    # Operations, refused and applied.
    for service in services:
        await s.call("rollback_deployment", service=service)
    await s.call("rollback_deployment", service="no-such-service")
    await s.call("rollback_deployment", service=services[0], to_version="v0.0.0-none")
    for service, info in described.items():
        for migration in info["migrations"]:
            await s.call("rollback_migration", service=service, migration=migration["id"])
    await s.call("rollback_migration", service=services[0], migration="no-such-migration")
    await s.call("rollback_migration", service="no-such-service", migration="m")
    await s.call("restart_service", service=services[0])
    await s.call("restart_service", service="no-such-service")
    await s.call("scale_service", service=services[0], replicas=2)
    await s.call("scale_service", service="no-such-service", replicas=2)
    for service, config in configs.items():
        for key, value in config["config"].items():
            await s.call("set_config", service=service, key=key, value=value)
            other = "text" if not isinstance(value, str) else 1
            await s.call("set_config", service=service, key=key, value=other)
            break
        await s.call("set_config", service=service, key="no_such_key", value=1)
        await s.call("rollback_config", service=service)
        for flag in config["flags"]:
            await s.call("set_feature_flag", flag=flag["name"], rollout_percent=0)
        for cert in config["certificates"][:1]:
            await s.call("renew_certificate", service=service, certificate=cert["name"])
        for queue in config["queues"][:1]:
            await s.call("skip_message", queue=queue["name"])
    await s.call("set_config", service="no-such-service", key="k", value=1)
    await s.call("rollback_config", service="no-such-service")
    await s.call("set_feature_flag", flag="no-such-flag", rollout_percent=0)
    await s.call("renew_certificate", service=services[0], certificate="no-such-certificate")
    await s.call("renew_certificate", service="no-such-service", certificate="c")
    await s.call("skip_message", queue="no-such-queue")
    for tool in ("sync_clock", "clean_disk", "warm_cache"):
        await s.call(tool, service=services[0])
        await s.call(tool, service="no-such-service")
    await s.call("submit_report", **REPORT)


class Channel:
    """The stubs of one owned channel."""

    def __init__(self, channel: Any) -> None:
        from metasre.v1 import control_pb2_grpc

        self.control = control_pb2_grpc.ControlServiceStub(channel)
        self.agent = agent_pb2_grpc.AgentServiceStub(channel)


async def test_every_tools_data_matches_its_published_schemas(server):
    async with owned_channel(server.address) as raw:
        channel = Channel(raw)
        tools = (await channel.control.ListTools(control_pb2.ListToolsRequest())).tools
        schemas = {t.name: (_plain(t.output_schema), _plain(t.error_schema)) for t in tools}
        for name, (output, error) in schemas.items():  # the schemas are schemas
            jsonschema.Draft202012Validator.check_schema(output)
            jsonschema.Draft202012Validator.check_schema(error)
            assert output["type"] == "object" and output["required"], name
        seen: set[tuple[str, bool]] = set()
        for family in FAMILIES:
            s = Sweep(channel, family, schemas)
            await sweep(s)
            seen |= s.seen
    never_ok = sorted(name for name in schemas if (name, True) not in seen)
    assert not never_ok, f"tools the sweep never saw succeed: {never_ok}"
    can_refuse = {name for name, (_, error) in schemas.items() if "not" not in error}
    never_refused = sorted(name for name in can_refuse if (name, False) not in seen)
    assert not never_refused, (
        f"tools with an error schema the sweep never saw refused: {never_refused}"
    )
    never = {name for name, (_, error) in schemas.items() if "not" in error}
    assert not {name for name, ok in seen if not ok} & never, "a tool said never to refuse refused"
