"""What a tool is: arguments, a description, a time cost, a handler, its traits and its effects.

The traits (`Tool`) and the effects (`ToolOutput`) are what the episode, the shaping, the
scenario spec and the service ask about, so that none of them switches on a tool's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from ..alerts import AlertRules
    from ..faults import Fault
    from ..logs import LogRenderer
    from ..report import IncidentReport
    from ..sandbox import RunReport
    from ..scenarios.loader import ScenarioInstance
    from ..telemetry import Telemetry
    from ..vfs import Workspace
    from ..views import View
    from ..world import World

ToolKind = Literal["investigate", "change", "operate", "team"]


class Args(BaseModel):
    """Base of every tool's argument model: unknown fields are an error, not ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_max_length=20_000)


class NoArgs(Args):
    """The tool takes no arguments."""


class Output(BaseModel):
    """Base of every tool's output model: the shape of its `ToolOutput.data`.

    Its JSON Schema is what clients see (ListTools' output and error schemas). Handlers build
    plain dicts, which costs nothing per call; `tests/service/test_output_schemas.py` plays every
    tool through a real server and validates what each call returned against the published
    schema, so a handler that drifts from its model fails there.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class Refusal(Output):
    """The data of a call the world refused (`ToolOutput.error` set)."""

    error: str = Field(description="What was wrong, and what exists instead.")


@dataclass(frozen=True, slots=True, kw_only=True)
class Operation:
    """An operation applied to the running platform, as the grade and the shaping judge it."""

    service: str
    """The service operated on."""
    release: str | None = None
    """The release asked for by a rollback; None for the default (the one before)."""
    migration: str | None = None
    """The migration rolled back: only the bad one is the incident's remedy."""
    replicas: int | None = None
    """The replica count set: far past what the incident needs is over-provisioning."""
    knob: str | None = None
    """The knob changed (`config:<key>`, `flag:<name>`, `certificate:<name>`,
    `queue:<name>`, `clock`, `disk`, `cache`): only the bad one is the incident's remedy."""

    @property
    def target(self) -> str:
        """What the operation was asked to move to, as a shell shows it ('' for nothing)."""
        return (
            self.migration
            or self.release
            or (str(self.replicas) if self.replicas else "")
            or (self.knob or "")
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Patch:
    """An edit as content: what it replaced, between which unchanged lines."""

    path: str
    above: tuple[str, ...]
    """Up to a few unchanged lines just above the edit (`tools.files.CONTEXT_LINES`)."""
    removed: tuple[str, ...]
    """The lines it replaced or deleted (none for an insert)."""
    below: tuple[str, ...]
    """As many unchanged lines just below it."""
    inserted: tuple[str, ...] = ()
    """The lines it put in their place."""
    start: int = 0
    """The 1-based line it applied at (0: unknown, for patches stored before it was kept)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TeamMessage:
    """A message to teammates, which the service delivers as a Message event."""

    to: tuple[str, ...]
    """Agent ids, or ("*",) for the whole team."""
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutput:
    """What a handler returns: text for an LLM, structured data, whether it worked, and its effects.

    The effects (`command` onwards) say what the call did that others act on: the episode, the
    shaping and the service read them, never the tool's name. A refused call (`error` set) has
    none.
    """

    text: str
    data: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None
    """A machine-readable in-world error code (`file_not_found`, `unknown_service`, ...)."""
    minutes: float | None = None
    """Overrides the tool's usual time cost (a longer test suite, say)."""
    command: str | None = None
    """The call as a shell shows it after the tool's name (`unit`, `payments v41`): the call
    leaves `$ <tool> <command>  # <first line of text>` in the observation's terminal."""
    operation: Operation | None = None
    """The operation applied: it has a price now and, if the incident did not need it, in the
    grade."""
    message: TeamMessage | None = None
    """A message to teammates."""
    report: IncidentReport | None = None
    """The incident report filed: the episode ends and is graded."""
    hint: bool = False
    """A hint was given: it costs reward, more for each one before it."""
    syntax_error: str | None = None
    """The call left a code file that no longer compiles: shaping charges it."""
    patch: Patch | None = None
    """The code changed, by content: a replay places the edit by it where other edits have
    moved its lines (`metasre.simulator.replay`)."""

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
    def view(self) -> View:
        """What the calling seat may see (`metasre.simulator.views`).

        A tool cuts its output to it; calls aimed at what it hides were refused before.
        """
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
    """One entry of the registry, with the traits others ask about instead of its name."""

    name: str
    description: str
    """Written for an LLM choosing a tool: what it does, when to use it, what it costs."""
    args: type[BaseModel]
    """The argument model; its JSON Schema is what clients see."""
    minutes: float
    """Simulated minutes the action takes."""
    kind: ToolKind
    """What it does to the world, as clients see it (ListTools): investigate and team tools
    only look, change edits the code, operate changes the running platform."""
    handler: Handler
    _: KW_ONLY
    output: type[Output]
    """The shape of a successful call's `data`; its JSON Schema is published by ListTools."""
    refusals: tuple[type[Output], ...] = (Refusal,)
    """The shapes of a refused call's `data` (the in-world errors the handler returns)."""
    names_agents: str | None = None
    """The argument (a list of agent ids, '*' for all) that names teammates, if any. The
    episode knows no team; a session refuses ids none of its seats has, rather than let a
    message go to nobody."""
    inline: bool = False
    """Cheap enough to apply on the service's event loop: no test run, no sandbox, about a
    millisecond. The service hands every other call to a worker thread."""
    ends_episode: bool = False
    """A successful call ends the episode for the whole team (its output carries the report)."""
    sends_message: bool = False
    """A successful call carries a message to teammates (its output's `message`)."""
    needs: frozenset[str] = frozenset()
    """The systems (`metasre.simulator.views.SYSTEMS`) a seat's view must show to call it."""
    service_args: tuple[str, ...] = ()
    """Arguments that name a service, or a thing a service owns (`queue`, `flag`): a seat whose
    view hides that service may not make the call."""
    gives_hints: bool = False
    """Its output is written for the whole incident (a hint): only a full view may call it."""

    @property
    def read_only(self) -> bool:
        """Changes neither the code nor the running platform: the world's signals stand."""
        return self.kind in ("investigate", "team")

    @property
    def changes_code(self) -> bool:
        """Edits the code tree: the production traffic is served again on the new code."""
        return self.kind == "change"

    @property
    def operates(self) -> bool:
        """Changes the running platform: an operation, with an outage and a price."""
        return self.kind == "operate"

    def served(self) -> dict[str, Any]:
        """This tool's ListTools entry (the ToolSpec message's fields) as plain data.

        The wire converts it field for field; an in-process client is given it as a client of
        the wire would read it, so a policy takes its vocabulary (the report's categories, what
        a tool needs of a view) from what the server publishes rather than a copy of its own.
        """
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.json_schema(),
            "kind": self.kind,
            "minutes": self.minutes,
            # The traits a view is judged by (`metasre.simulator.views.refusal`), so that
            # clients ask the server rather than re-derive them.
            "needs": sorted(self.needs),
            "service_args": list(self.service_args),
            "gives_hints": self.gives_hints,
            "output_schema": self.output_schema(),
            "error_schema": self.error_schema(),
        }

    def json_schema(self) -> dict[str, Any]:
        """The arguments' JSON Schema, as clients (MCP, OpenAI functions) see it."""
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        schema.setdefault("properties", {})
        schema["additionalProperties"] = False
        return schema

    def output_schema(self) -> dict[str, Any]:
        """The JSON Schema of a successful call's `data` (ToolResult.ok true)."""
        return _schema_of((self.output,))

    def error_schema(self) -> dict[str, Any]:
        """The JSON Schema of a refused call's `data` (ToolResult.ok false)."""
        return _schema_of(self.refusals)


def _schema_of(models: tuple[type[Output], ...]) -> dict[str, Any]:
    """One model's JSON Schema, the union's (anyOf) when there are several, none for none."""
    if not models:
        return {"not": {}, "description": "Never: this tool's calls are never refused."}
    defs: dict[str, Any] = {}
    branches = []
    for model in models:
        schema = model.model_json_schema()  # its $refs point at the root's $defs
        defs.update(schema.pop("$defs", {}))
        branches.append(schema)
    union = branches[0] if len(branches) == 1 else {"anyOf": branches}
    union.pop("title", None)
    return {**union, "$defs": defs} if defs else union
