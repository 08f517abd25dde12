"""A role team's seats: each one's view and tools, and the remedy each kind of failure needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...views import may_call
from ..evidence import SUITE_FOR


@dataclass(frozen=True, slots=True)
class SeatView:
    """What a seat sees, as the wire tells it (`simulator.views.View` on the agents' side).

    `services`: whose signals the seat sees (None: every service); `code`, `data`, `deploys`:
    whether it sees the code tree, the data layer and the deploy system.
    """

    services: tuple[str, ...] | None = None
    code: bool = True
    data: bool = True
    deploys: bool = True

    @classmethod
    def of(cls, view: Mapping[str, Any] | None) -> SeatView:
        """A view as the client gives it or as ListScenarios lists it; None is the full view.

        The client's form has `services`, `code`, `data`, `deploys`; ListScenarios' has
        `services`, `hide_code`, `hide_data`, `hide_deploys`.
        """
        if not view:
            return cls()
        services = tuple(str(s) for s in view.get("services") or ()) or None

        def shown(system: str) -> bool:
            if system in view:
                return bool(view[system])
            return not view.get(f"hide_{system}", False)

        return cls(services, shown("code"), shown("data"), shown("deploys"))

    @property
    def full(self) -> bool:
        """Sees everything."""
        return self.services is None and self.code and self.data and self.deploys

    def sees(self, service: str) -> bool:
        """Whether the seat sees `service`'s signals and may operate on it."""
        return self.services is None or service in self.services

    def shows(self, system: str) -> bool:
        """Whether the seat sees `system` (code, data or deploys)."""
        return bool(getattr(self, system))

    def plain(self) -> dict[str, Any]:
        """The view as the SDK gives it (`metasre.agents.client.view_of`)."""
        return {
            "services": None if self.services is None else list(self.services),
            "code": self.code,
            "data": self.data,
            "deploys": self.deploys,
        }

    def describe(self) -> str:
        """One line for a prompt, worded as `simulator.views.View.describe` words it."""
        if self.full:
            return "full view: every service, the code, the data layer and the deploy system"
        seen = "every service" if self.services is None else ", ".join(self.services) or "none"
        hidden = [s for s in SYSTEMS if not self.shows(s)]
        return f"services: {seen}; hidden: {', '.join(hidden) or 'nothing else'}"


SYSTEMS = ("code", "data", "deploys")
"""The systems a view can hide."""

REMEDY: Mapping[str, str] = {
    **{category: "edit_lines" for category in SUITE_FOR},
    "bad_deployment": "rollback_deployment",
    "bad_migration": "rollback_migration",
    "slow_query": "rollback_migration",
    "crash_loop": "restart_service",
    "capacity": "scale_service",
    "bad_config": "rollback_config",
    "retry_storm": "rollback_config",
    "feature_flag": "set_feature_flag",
    "expired_certificate": "renew_certificate",
    "clock_skew": "sync_clock",
    "disk_full": "clean_disk",
    "consumer_lag": "skip_message",
    "cache_stampede": "warm_cache",
}
"""Per kind of failure (each `category` of submit_report's schema), the tool of its remedy, as
`ExpertPolicy.remediate` applies it. What that tool needs of a view is the server's to say
(ListTools' `needs`), not this table's."""
CODE_REMEDY = "edit_lines"
"""The remedy of a kind of failure the table does not know: a code fix."""


@dataclass(frozen=True, slots=True)
class RoleSeat:
    """One seat of a role team.

    Its name is the scenario role's (and the seat's agent id); its view and tools are the
    role's (no tools: every tool).
    """

    name: str
    view: SeatView = SeatView()
    tools: tuple[str, ...] = ()
    description: str = ""

    def may(self, tool: str) -> bool:
        """Whether the role may call `tool`."""
        return not self.tools or tool in self.tools

    def can_fix(self, service: str, category: str, tools: Mapping[str, Mapping[str, Any]]) -> bool:
        """Whether this seat may apply the remedy for `category` on `service`.

        `tools`: the server's tools by name, as ListTools serves them (their `needs`).
        """
        tool = REMEDY.get(category, CODE_REMEDY)
        served = tools.get(tool)
        return (
            self.view.sees(service)
            and self.may(tool)
            and served is not None
            and may_call(self.view.plain(), served, {"service": service})
        )

    @classmethod
    def of(cls, role: Mapping[str, Any]) -> RoleSeat:
        """A role as ListScenarios lists it."""
        return cls(
            str(role["name"]),
            SeatView.of(role.get("view")),
            tuple(str(t) for t in role.get("tools") or ()),
            str(role.get("description", "")),
        )


def reporter_of(seats: Sequence[RoleSeat]) -> str:
    """The seat that files the report: the first whose role may call submit_report."""
    return next((s.name for s in seats if s.may("submit_report")), seats[0].name)


__all__ = ["CODE_REMEDY", "REMEDY", "SYSTEMS", "RoleSeat", "SeatView", "reporter_of"]
