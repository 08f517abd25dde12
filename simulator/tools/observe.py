"""Tools that read the platform's signals: logs, metrics, alerts, dependencies, service state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import Field

from ..logs import LEVELS, LogLine
from ..scenarios.spec import METRICS, Metric
from ..views import shows_event
from .base import (
    Args,
    NoArgs,
    Output,
    Refusal,
    Tool,
    ToolContext,
    ToolOutput,
)


def unknown_service(ctx: ToolContext, name: str) -> ToolOutput:
    """The in-world refusal for a service that does not exist."""
    known = sorted(ctx.world.services)
    return ToolOutput(
        text=f"error: no service named {name!r}; services are: {', '.join(known)}",
        data={"error": "unknown service", "service": name, "services": known},
        error="unknown_service",
    )


class ReadLogsArgs(Args):
    """Arguments of read_logs."""

    service: str = Field(max_length=64, description="Service whose log to read.")
    lines: int = Field(40, ge=1, le=500, description="How many of the newest lines to return.")
    level: Literal["DEBUG", "INFO", "WARN", "ERROR", "FATAL"] | None = Field(
        None, description="Only lines at this level or more severe."
    )
    contains: str | None = Field(None, max_length=200, description="Only lines containing this.")
    since_minutes: int = Field(30, ge=1, le=240, description="How far back to look.")


def read_logs(ctx: ToolContext, args: ReadLogsArgs) -> ToolOutput:
    """The newest lines of a service's log."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    keep = _log_filter(args.level, args.contains)
    # A service logs its own releases and migrations: a view hiding those systems hides them here.
    hidden = {
        f"{e.text} (by {e.by})"
        for e in ctx.world.events
        if e.service == args.service and not shows_event(ctx.view, e.service, e.kind)
    }
    if hidden:
        keep = _without(hidden, keep)
    lines = ctx.logs.tail(
        args.service, ctx.minute - args.since_minutes + 1, ctx.minute, args.lines, keep
    )
    rendered = [ln.render() for ln in lines]
    header = f"{args.service} log, last {len(rendered)} lines of {args.since_minutes} min"
    return ToolOutput(
        text="\n".join([header, *rendered]) if rendered else f"{header}: nothing matched",
        data={
            "service": args.service,
            "lines": [
                {"timestamp": ln.timestamp, "level": ln.level, "text": ln.text} for ln in lines
            ],
        },
    )


def _without(texts: set[str], keep: Callable[[LogLine], bool] | None) -> Callable[[LogLine], bool]:
    """`keep`, and not one of `texts`."""
    return lambda line: line.text not in texts and (keep is None or keep(line))


def _log_filter(level: str | None, contains: str | None) -> Callable[[LogLine], bool] | None:
    """A test for the lines a read keeps (None keeps them all)."""
    if level is None and not contains:
        return None
    floor = LEVELS.index(level) if level is not None else 0
    severe = frozenset(LEVELS[floor:])
    needle = contains or ""
    return lambda line: line.level in severe and needle in line.text


class QueryMetricsArgs(Args):
    """Arguments of query_metrics."""

    service: str = Field(max_length=64, description="Service to query.")
    metric: Metric = Field(description="Signal: " + ", ".join(METRICS) + ".")
    window_minutes: int = Field(30, ge=1, le=240, description="Minutes of history, newest last.")


def query_metrics(ctx: ToolContext, args: QueryMetricsArgs) -> ToolOutput:
    """A metric's per-minute history over a window."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    series = ctx.telemetry.series(
        args.service, args.metric, ctx.minute - args.window_minutes + 1, ctx.minute
    )
    values = [v for _, v in series]
    first, last = values[0], values[-1]
    summary = (
        f"{args.service} {args.metric} over {args.window_minutes} min: "
        f"min {min(values):g}, max {max(values):g}, first {first:g}, now {last:g}"
    )
    spark = " ".join(f"t{m:+d}={v:g}" for m, v in series[-15:])
    return ToolOutput(
        text=f"{summary}\n{spark}",
        data={
            "service": args.service,
            "metric": args.metric,
            "points": [{"minute": m, "value": v} for m, v in series],
            "min": min(values),
            "max": max(values),
            "last": last,
        },
    )


def get_alerts(ctx: ToolContext, args: NoArgs) -> ToolOutput:
    """Alerts firing now."""
    alerts = [a for a in ctx.alerts.firing(ctx.minute) if ctx.view.sees(a.service)]
    if not alerts:
        return ToolOutput(text="no alerts firing", data={"alerts": []})
    lines = [
        f"[{a.severity}] {a.id} {a.service}: {a.summary} ({a.metric}={a.value:g}, "
        f"threshold {a.threshold:g}, firing for {ctx.minute - a.since_minute} min)"
        for a in alerts
    ]
    return ToolOutput(
        text="\n".join(lines),
        data={
            "alerts": [
                {
                    "id": a.id,
                    "service": a.service,
                    "severity": a.severity,
                    "metric": a.metric,
                    "value": a.value,
                    "threshold": a.threshold,
                    "summary": a.summary,
                    "since_minute": a.since_minute,
                }
                for a in alerts
            ]
        },
    )


class CheckDependenciesArgs(Args):
    """Arguments of check_dependencies."""

    service: str | None = Field(
        None, max_length=64, description="One service's neighbours; omit for the whole graph."
    )


def check_dependencies(ctx: ToolContext, args: CheckDependenciesArgs) -> ToolOutput:
    """The dependency graph with each service's health now."""
    world = ctx.world
    if args.service is not None and args.service not in world.services:
        return unknown_service(ctx, args.service)
    names = sorted(world.services) if args.service is None else [args.service]
    names = [n for n in names if ctx.view.sees(n)]
    rows = []
    for name in names:
        health = ctx.telemetry.signals(name, ctx.minute).health
        rows.append(
            {
                "service": name,
                "health": health,
                "depends_on": list(world.services[name].depends_on),
                "dependents": world.dependents(name),
            }
        )
    text = "\n".join(
        f"{r['service']} [{r['health']}] -> {', '.join(r['depends_on']) or '(none)'}"
        f"; called by {', '.join(r['dependents']) or '(nobody)'}"
        for r in rows
    )
    return ToolOutput(text=text, data={"services": rows})


class DescribeServiceArgs(Args):
    """Arguments of describe_service."""

    service: str = Field(max_length=64, description="Service to describe.")


def describe_service(ctx: ToolContext, args: DescribeServiceArgs) -> ToolOutput:
    """A service's releases, replicas, restarts, migrations and signals now."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    svc = ctx.world.services[args.service]
    sig = ctx.telemetry.signals(args.service, ctx.minute)
    view = ctx.view
    releases = [
        {"version": r.version, "minute": r.at_minute, "by": r.by}
        for r in (svc.releases if view.deploys else ())
    ]
    migrations = [
        {"id": m.id, "applied_minute": m.applied_at, "file": m.file, "applied": m.applied}
        for m in (ctx.world.migrations if view.data else ())
        if m.service == svc.name
    ]
    version = svc.version if view.deploys else ""
    code_dir = svc.code_dir if view.code else None
    lines = [
        f"{svc.name}: {sig.health}"
        + (f", version {version}" if version else "")
        + f", {svc.replicas} replicas"
        + (f", code in {code_dir}/" if code_dir else ""),
        f"  now: cpu {sig.cpu:.0%} memory {sig.memory:.0%} errors {sig.error_rate:.1%} "
        f"p99 {sig.p99_ms:.0f} ms queue {sig.queue_depth:.0f}",
    ]
    if view.deploys:
        lines.append(
            "  releases: "
            + ", ".join(f"{r['version']} (t{r['minute']:+.0f}m by {r['by']})" for r in releases)
        )
    if svc.restarts:
        lines.append("  restarts at: " + ", ".join(f"t{t:+.1f}m" for t in svc.restarts))
    if migrations:
        lines.append(
            "  migrations: "
            + ", ".join(
                f"{m['id']}{'' if m['applied'] else ' (rolled back)'}"
                f" (t{m['applied_minute']:+.0f}m)"
                for m in migrations
            )
        )
    return ToolOutput(
        text="\n".join(lines),
        data={
            "service": svc.name,
            "health": sig.health,
            "version": version,
            "replicas": svc.replicas,
            "code_dir": code_dir,
            "releases": releases,
            "restarts": list(svc.restarts),
            "migrations": migrations,
            "depends_on": list(svc.depends_on),
        },
    )


class UnknownServiceRefusal(Refusal):
    """A call naming a service that does not exist."""

    service: str = Field(description="The name given.")
    services: list[str] = Field(description="The services that exist.")


class LogLineOutput(Output):
    """One log line."""

    timestamp: str = Field(description="When, in UTC (ISO 8601).")
    level: str = Field(description="DEBUG, INFO, WARN, ERROR or FATAL.")
    text: str = Field(description="The message.")


class ReadLogsOutput(Output):
    """What read_logs returns."""

    service: str = Field(description="The service read.")
    lines: list[LogLineOutput] = Field(description="The lines kept, oldest first.")


class MetricPoint(Output):
    """One minute's value of a metric."""

    minute: int = Field(description="Simulated minute (0 is the page; negative before it).")
    value: float = Field(description="The metric's value that minute.")


class QueryMetricsOutput(Output):
    """What query_metrics returns."""

    service: str = Field(description="The service queried.")
    metric: str = Field(description="The metric queried.")
    points: list[MetricPoint] = Field(description="One point per minute, oldest first.")
    min: float = Field(description="The smallest value in the window.")
    max: float = Field(description="The largest value in the window.")
    last: float = Field(description="The value now.")


class AlertOutput(Output):
    """One firing alert."""

    id: str = Field(description="The alert's id.")
    service: str = Field(description="The service it fires for.")
    severity: str = Field(description="P1, P2, ...")
    metric: str = Field(description="The metric that crossed its threshold.")
    value: float = Field(description="The metric's value now.")
    threshold: float = Field(description="The threshold it crossed.")
    summary: str = Field(description="One line saying what is wrong.")
    since_minute: int = Field(description="The simulated minute it started firing.")


class GetAlertsOutput(Output):
    """What get_alerts returns."""

    alerts: list[AlertOutput] = Field(description="The alerts firing now that the seat sees.")


class DependencyRow(Output):
    """One service in the dependency graph."""

    service: str = Field(description="The service.")
    health: str = Field(description="healthy, degraded or down.")
    depends_on: list[str] = Field(description="The services it calls.")
    dependents: list[str] = Field(description="The services that call it.")


class CheckDependenciesOutput(Output):
    """What check_dependencies returns."""

    services: list[DependencyRow] = Field(description="The services shown, by name.")


class ReleaseRow(Output):
    """One release of a service."""

    version: str = Field(description="The release's version.")
    minute: float = Field(description="When it shipped, in simulated minutes (negative: before).")
    by: str = Field(description="Who shipped it.")


class MigrationRow(Output):
    """One migration of a service's database."""

    id: str = Field(description="The migration's id (for rollback_migration).")
    applied_minute: float = Field(description="When it was applied, in simulated minutes.")
    file: str = Field(description="Its file in the code tree.")
    applied: bool = Field(description="False once rolled back.")


class DescribeServiceOutput(Output):
    """What describe_service returns; parts the seat's view hides are empty."""

    service: str = Field(description="The service.")
    health: str = Field(description="healthy, degraded or down.")
    version: str = Field(description="The deployed version ('' when deploys are hidden).")
    replicas: int = Field(description="Running replicas.")
    code_dir: str | None = Field(description="Its code's folder (null when code is hidden).")
    releases: list[ReleaseRow] = Field(description="Its releases, oldest first.")
    restarts: list[float] = Field(description="The simulated minutes it was restarted at.")
    migrations: list[MigrationRow] = Field(description="Its database's migrations.")
    depends_on: list[str] = Field(description="The services it calls.")


TOOLS = (
    Tool(
        "read_logs",
        "Read the newest lines of one service's log (stack traces, DB errors, "
        "warnings), optionally filtered by level or text. Timestamps are UTC.",
        ReadLogsArgs,
        0.5,
        "investigate",
        read_logs,
        output=ReadLogsOutput,
        refusals=(UnknownServiceRefusal,),
        inline=True,
        service_args=("service",),
    ),
    Tool(
        "query_metrics",
        "Per-minute history of one signal of one service: cpu, memory "
        "(fractions of the limit), error_rate (fraction of requests), p99_ms, queue_depth, or "
        "business (e.g. attributed conversions per minute). Compare now with before the page.",
        QueryMetricsArgs,
        0.5,
        "investigate",
        query_metrics,
        output=QueryMetricsOutput,
        refusals=(UnknownServiceRefusal,),
        inline=True,
        service_args=("service",),
    ),
    Tool(
        "get_alerts",
        "List the alerts firing now, most severe first. Loud alerts are often "
        "symptoms downstream of the real cause.",
        NoArgs,
        0.2,
        "investigate",
        get_alerts,
        output=GetAlertsOutput,
        refusals=(),
        inline=True,
    ),
    Tool(
        "check_dependencies",
        "Show which services call which, with each one's health now. "
        "Follow failures toward the dependencies to find where they start.",
        CheckDependenciesArgs,
        0.2,
        "investigate",
        check_dependencies,
        output=CheckDependenciesOutput,
        refusals=(UnknownServiceRefusal,),
        inline=True,
        service_args=("service",),
    ),
    Tool(
        "describe_service",
        "Show one service's deployed version and release history, "
        "replicas, restarts, database migrations and current signals.",
        DescribeServiceArgs,
        0.3,
        "investigate",
        describe_service,
        output=DescribeServiceOutput,
        refusals=(UnknownServiceRefusal,),
        inline=True,
        service_args=("service",),
    ),
)
