"""What one seat may see of the incident: its view (partial observability by role).

A view limits a seat to some services' signals (logs, metrics, events, settings, alerts and
dashboard rows) and can hide three whole systems: the code tree (files, git history, tests,
edits), the data layer (applied migrations and their rollback) and the deploy system (releases,
versions and their rollback). The full view, every service and every system, is the default.

Two rules keep a view honest and the episode deterministic:

- A view never changes the world or whether a call succeeds. A call aimed at something the view
  hides (a hidden service's logs, a file when the code is hidden, a rollback of a hidden release)
  is refused before it reaches the episode, as a tool the seat's role may not use is; see
  `refusal`. So the world, and everything graded, is the same function of the applied calls.
- What a call the view allows shows is cut to the view by the tool itself (`ToolContext.view`):
  the pager's alerts of hidden services, their events, their rows of the dependency graph, a
  hidden system's lines of a description. `observe` cuts the dashboard the same way.

Teammates' calls reach a restricted seat as who called which tool, when and with what outcome,
never their arguments or results (`metasre.service.core.projection`, which makes everything a
seat receives for its view): those are what the seat's own view would have hidden, and only a
teammate's message may carry them, in the teammate's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from .observation import Observation
    from .tools.base import Tool

SYSTEMS = ("code", "data", "deploys")
"""The systems a view can hide, as a tool's `Tool.needs` names them."""


class View(BaseModel):
    """What a seat sees; the default is everything."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    services: tuple[str, ...] | None = Field(None, max_length=256)
    """The services whose signals the seat sees, or None for all of them."""
    code: bool = True
    """The code tree: files, git history, the visible test suites, edits."""
    data: bool = True
    """The data layer: applied migrations, their events and their rollback."""
    deploys: bool = True
    """The deploy system: releases and versions, deploy events, rollback of a release."""

    @property
    def full(self) -> bool:
        """Sees everything: nothing to cut, nothing to refuse."""
        return self.services is None and self.code and self.data and self.deploys

    def sees(self, service: str) -> bool:
        """Whether the seat sees `service`'s signals."""
        return self.services is None or service in self.services

    def shows(self, system: str) -> bool:
        """Whether the seat sees `system` (one of `SYSTEMS`)."""
        return bool(getattr(self, system))

    def describe(self) -> str:
        """One line for an agent's prompt: what this view shows and hides."""
        if self.full:
            return "full view: every service, the code, the data layer and the deploy system"
        seen = "every service" if self.services is None else ", ".join(self.services) or "none"
        hidden = [s for s in SYSTEMS if not self.shows(s)]
        return f"services: {seen}; hidden: {', '.join(hidden) or 'nothing else'}"


FULL = View()


def refusal(view: View, tool: Tool, args: Mapping[str, Any], owners: Mapping[str, str]) -> str:
    """Why `view` may not make this call ('' if it may); the call never reaches the episode.

    `owners`: which service owns each queue and flag (`owners_of`), for tools that name those.
    """
    if view.full:
        return ""
    for system in tool.needs:
        if not view.shows(system):
            return f"{tool.name} needs the {system} view, which this seat's view hides"
    if tool.gives_hints:
        # A hint is written for the whole incident: it names what any view may hide.
        return f"{tool.name} is for seats with the full view"
    for key in tool.service_args:
        value = args.get(key)
        if value is None:
            continue
        # A queue or flag nobody owns is left to the tool, which refuses it as unknown.
        service = str(value) if key == "service" else owners.get(f"{key}:{value}")
        if service is not None and not view.sees(service):
            # Named as the seat named it: the owner of a flag or queue is what the view hides.
            shown = ", ".join(view.services or ())
            return (
                f"{tool.name}: {key} {str(value)[:64]!r} is outside this seat's view "
                f"(it sees the services: {shown})"
            )
    return ""


def owners_of(spec: Any) -> dict[str, str]:
    """`refusal`'s owner map of a scenario spec: `queue:<name>` and `flag:<name>` to service."""
    out = {f"queue:{q.name}": q.service for q in spec.queues}
    out.update({f"flag:{f.name}": f.service for f in spec.flags})
    return out


def observe(view: View, observation: Observation) -> Observation:
    """The dashboard as `view` shows it.

    Alerts and rows of hidden services go; the dependency column of a row the seat sees still
    names what that service calls (its own configuration names the host anyway, and a team
    plans around it); without the deploy view, versions and recent deploys go. The terminal,
    which echoes every seat's calls and results, shows nothing to a restricted seat: its own
    results reach it anyway.
    """
    if view.full:
        return observation
    rows = tuple(
        r if view.deploys else replace(r, version="", recent_deploy=None)
        for r in observation.services
        if view.sees(r.name)
    )
    return replace(
        observation,
        alerts=tuple(a for a in observation.alerts if view.sees(a.service)),
        services=rows,
        terminal=(),
    )


DEPLOY_EVENTS = frozenset({"deploy", "rollback", "hotfix"})
"""Change events of the deploy system."""
DATA_EVENTS = frozenset({"migration", "migration_rollback"})
"""Change events of the data layer."""
CODE_EVENTS = frozenset({"hotfix"})
"""Change events that name the code tree: a hotfix names the file an edit changed."""


def shows_event(view: View, service: str, kind: str) -> bool:
    """Whether `view` shows a change event of `kind` on `service`."""
    if not view.sees(service):
        return False
    if kind in DEPLOY_EVENTS and not view.deploys:
        return False
    if kind in CODE_EVENTS and not view.code:
        return False
    return not (kind in DATA_EVENTS and not view.data)


__all__ = [
    "CODE_EVENTS",
    "DATA_EVENTS",
    "DEPLOY_EVENTS",
    "FULL",
    "SYSTEMS",
    "View",
    "observe",
    "owners_of",
    "refusal",
    "shows_event",
]
