"""A tool that reads the platform's change timeline: what was deployed, migrated or operated on."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..clock import stamp
from ..views import shows_event
from .base import Args, Output, Tool, ToolContext, ToolOutput
from .observe import UnknownServiceRefusal, unknown_service

EventKind = Literal[
    "deploy",
    "migration",
    "rollback",
    "migration_rollback",
    "restart",
    "scale",
    "hotfix",
    "config",
    "config_rollback",
    "flag",
    "certificate",
    "clock_sync",
    "disk_clean",
    "message_skip",
    "cache_warm",
]


class GetEventsArgs(Args):
    """Arguments of get_events."""

    service: str | None = Field(
        None, max_length=64, description="One service's changes; omit for the whole platform."
    )
    kind: EventKind | None = Field(None, description="Only changes of this kind.")
    since_minutes: int = Field(
        1440, ge=1, le=43_200, description="How far back to look, in minutes (default a day)."
    )
    limit: int = Field(50, ge=1, le=200, description="How many of the newest changes to return.")


def get_events(ctx: ToolContext, args: GetEventsArgs) -> ToolOutput:
    """The platform's changes, oldest first: releases, migrations and every operation since."""
    world = ctx.world
    if args.service is not None and args.service not in world.services:
        return unknown_service(ctx, args.service)
    # Migrations applied before the page are changes too, though no operation made them.
    changes = [(e.at_minute, e.service, e.kind, e.text, e.by) for e in world.events]
    changes += [
        (m.applied_at, m.service, "migration", f"applied migration {m.id} on {m.service}", "")
        for m in world.migrations
    ]
    since = ctx.clock - args.since_minutes
    picked = [
        c
        for c in changes
        if c[0] >= since
        and (args.service is None or c[1] == args.service)
        and (args.kind is None or c[2] == args.kind)
        and shows_event(ctx.view, c[1], c[2])
    ]
    # Stable: changes of one moment keep the order the world recorded them in.
    picked = sorted(picked, key=lambda c: c[0])[-args.limit :]
    rows = [
        {
            "minute": at,
            "timestamp": stamp(ctx.start_time, at, int(round(at % 1 * 60, 6))),
            "service": service,
            "kind": kind,
            "text": text,
            "by": by,
        }
        for at, service, kind, text, by in picked
    ]
    where = args.service or "the platform"
    header = f"changes to {where} in the last {args.since_minutes} min" + (
        f", {args.kind} only" if args.kind else ""
    )
    if not rows:
        return ToolOutput(text=f"{header}: none", data={"events": []})
    lines = [
        f"  t{r['minute']:+.1f}m {r['timestamp']} {r['kind']:<18} {r['text']}"
        + (f" (by {r['by']})" if r["by"] else "")
        for r in rows
    ]
    return ToolOutput(text="\n".join([f"{header}, oldest first:", *lines]), data={"events": rows})


class EventRow(Output):
    """One change to the platform."""

    minute: float = Field(description="When, in simulated minutes (negative: before the page).")
    timestamp: str = Field(description="When, in UTC (ISO 8601).")
    service: str = Field(description="The service changed.")
    kind: str = Field(description="The kind of change (the kind argument's values).")
    text: str = Field(description="What changed.")
    by: str = Field(description="Who changed it ('' for changes before the incident's record).")


class GetEventsOutput(Output):
    """What get_events returns."""

    events: list[EventRow] = Field(description="The changes, oldest first.")


TOOLS = (
    Tool(
        "get_events",
        "List the platform's changes, oldest first: releases deployed, migrations applied, "
        "config pushes and feature flag changes, and every operation since the page (rollback, "
        "restart, scale, hotfix, config, certificate, clock, disk, queue, cache), with who "
        "made them. "
        "Ask what changed just before the page: a release or a migration shortly before the "
        "first alert is a prime suspect.",
        GetEventsArgs,
        0.2,
        "investigate",
        get_events,
        output=GetEventsOutput,
        refusals=(UnknownServiceRefusal,),
        inline=True,
        service_args=("service",),
    ),
)
