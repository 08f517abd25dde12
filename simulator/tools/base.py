"""What a tool is: an argument model, a description for an LLM, a time cost and a handler."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from metasre.simulator.alerts import AlertRules
    from metasre.simulator.faults import Fault
    from metasre.simulator.logs import LogRenderer
    from metasre.simulator.sandbox import RunReport
    from metasre.simulator.scenarios.loader import ScenarioInstance
    from metasre.simulator.telemetry import Telemetry
    from metasre.simulator.vfs import Workspace
    from metasre.simulator.world import World

ToolKind = Literal["investigate", "change", "operate", "team"]


class Args(BaseModel):
    """Base of every tool's argument model: unknown fields are an error, not ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_max_length=20_000)


class NoArgs(Args):
    """The tool takes no arguments."""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a handler returns: text for an LLM, structured data, and whether it worked."""

    text: str
    data: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None
    """A machine-readable in-world error code (`file_not_found`, `unknown_service`, ...)."""
    minutes: float | None = None
    """Overrides the tool's usual time cost (a longer test suite, say)."""

    @property
    def ok(self) -> bool:
        """True unless the world refused the call."""
        return self.error is None


class ToolContext(Protocol):
    """The parts of an episode a handler may read and change."""

    @property
    def instance(self) -> ScenarioInstance:
        """The rendered scenario."""
        ...

    @property
    def workspace(self) -> Workspace:
        """The episode's code tree."""
        ...

    @property
    def world(self) -> World:
        """The operational state."""
        ...

    @property
    def telemetry(self) -> Telemetry:
        """Signals per service and minute."""
        ...

    @property
    def logs(self) -> LogRenderer:
        """Log lines per service and minute."""
        ...

    @property
    def alerts(self) -> AlertRules:
        """The scenario's alert rules over the telemetry."""
        ...

    @property
    def faults(self) -> tuple[Fault, ...]:
        """The scenario's faults."""
        ...

    @property
    def clock(self) -> float:
        """Simulated minutes since the page."""
        ...

    @property
    def minute(self) -> int:
        """The current whole simulated minute."""
        ...

    @property
    def start_time(self) -> datetime:
        """When the page went off."""
        ...

    @property
    def agent_id(self) -> str:
        """The agent whose call is being applied."""
        ...

    @property
    def hints_given(self) -> int:
        """Hints asked for so far."""
        ...

    def run_visible_suite(self, suite: str, path: str | None) -> tuple[RunReport, list[str]]:
        """Run a visible suite on the current code; returns the report and the files run."""
        ...

    def service_of_path(self, path: str) -> str | None:
        """The service whose code folder holds `path`, if any."""
        ...


Handler = Callable[[ToolContext, Any], ToolOutput]


@dataclass(frozen=True, slots=True)
class Tool:
    """One entry of the registry."""

    name: str
    description: str
    """Written for an LLM choosing a tool: what it does, when to use it, what it costs."""
    args: type[BaseModel]
    """The argument model; its JSON Schema is what clients see."""
    minutes: float
    """Simulated minutes the action takes."""
    kind: ToolKind
    handler: Handler
    names_agents: str | None = None
    """The argument (a list of agent ids, '*' for all) that names teammates, if any. The
    episode knows no team; a session refuses ids none of its seats has, rather than let a
    message go to nobody."""

    def json_schema(self) -> dict[str, Any]:
        """The arguments' JSON Schema, as clients (MCP, OpenAI functions) see it."""
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        schema.setdefault("properties", {})
        schema["additionalProperties"] = False
        return schema
