"""Tools that change the running platform: rollbacks, restarts and scaling."""

from __future__ import annotations

from pydantic import Field

from ..errors import OperationError
from ..rewards import OPERATION, OVER_PROVISION_FACTOR, UNNEEDED_OPERATION
from ..world import MIGRATION_OUTAGE, RESTART_OUTAGE, ROLLBACK_OUTAGE
from .base import (
    Args,
    Operation,
    Output,
    Refusal,
    Tool,
    ToolContext,
    ToolOutput,
)
from .observe import UnknownServiceRefusal, unknown_service


def _refused(exc: OperationError) -> ToolOutput:
    return ToolOutput(text=f"error: {exc}", data={"error": str(exc)}, error="operation_refused")


def _applied(operation: Operation, text: str, data: dict[str, object]) -> ToolOutput:
    """The output of an applied operation: its effect, and its line in the terminal."""
    return ToolOutput(
        text=text,
        data=data,
        operation=operation,
        command=f"{operation.service} {operation.target}",
    )


class RollbackDeploymentArgs(Args):
    """Arguments of rollback_deployment."""

    service: str = Field(max_length=64, description="Service to roll back.")
    to_version: str | None = Field(
        None, max_length=64, description="Release to return to; default the previous one."
    )


def rollback_deployment(ctx: ToolContext, args: RollbackDeploymentArgs) -> ToolOutput:
    """Put an earlier release back in service."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    previous = ctx.world.services[args.service].version
    try:
        release = ctx.world.rollback_deployment(
            args.service, args.to_version, ctx.clock, ctx.agent_id
        )
    except OperationError as exc:
        return _refused(exc)
    return _applied(
        Operation(service=args.service, release=args.to_version),
        f"{args.service} rolled back from {previous} to {release.version}; pods replaced",
        {"service": args.service, "from_version": previous, "to_version": release.version},
    )


class RollbackMigrationArgs(Args):
    """Arguments of rollback_migration."""

    service: str = Field(max_length=64, description="Service (database) owning the migration.")
    migration: str = Field(max_length=128, description="Id of the applied migration to revert.")


def rollback_migration(ctx: ToolContext, args: RollbackMigrationArgs) -> ToolOutput:
    """Revert one applied database migration."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    try:
        m = ctx.world.rollback_migration(args.service, args.migration, ctx.clock, ctx.agent_id)
    except OperationError as exc:
        return _refused(exc)
    return _applied(
        Operation(service=args.service, migration=args.migration),
        f"migration {m.id} rolled back on {m.service}",
        {"service": m.service, "migration": m.id},
    )


class ServiceArgs(Args):
    """Arguments naming one service."""

    service: str = Field(max_length=64, description="Service to act on.")


def restart_service(ctx: ToolContext, args: ServiceArgs) -> ToolOutput:
    """Restart every replica of a service."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    ctx.world.restart(args.service, ctx.clock, ctx.agent_id)
    for fault in ctx.faults:
        if fault.spec.service == args.service:
            fault.note_restart(ctx.clock)
    replicas = ctx.world.services[args.service].replicas
    return _applied(
        Operation(service=args.service),
        f"restarted {replicas} replicas of {args.service}",
        {"service": args.service, "replicas": replicas},
    )


class ScaleServiceArgs(Args):
    """Arguments of scale_service."""

    service: str = Field(max_length=64, description="Service to scale.")
    replicas: int = Field(ge=1, le=64, description="Replica count to run (1-64).")


def scale_service(ctx: ToolContext, args: ScaleServiceArgs) -> ToolOutput:
    """Set a service's replica count."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    previous = ctx.world.scale(args.service, args.replicas, ctx.clock, ctx.agent_id)
    return _applied(
        Operation(service=args.service, replicas=args.replicas),
        f"{args.service} scaled from {previous} to {args.replicas} replicas",
        {"service": args.service, "from_replicas": previous, "replicas": args.replicas},
    )


_COST = (
    " Restarts and rollbacks are outages of their own while they happen (errors on the service"
    f" for {RESTART_OUTAGE[0]} minute after a restart, {ROLLBACK_OUTAGE[0]} after a rollback,"
    f" {MIGRATION_OUTAGE[0]} after a migration rollback)."
    f" Every operation costs {-OPERATION:g} reward at once; one the incident did not need (not"
    f" its remedy, a repeat of it, or a scale past {OVER_PROVISION_FACTOR}x the replicas"
    f" needed) costs {-UNNEEDED_OPERATION:g} of the grade, settled when the episode ends."
)


class RollbackDeploymentOutput(Output):
    """What rollback_deployment returns."""

    service: str = Field(description="The service rolled back.")
    from_version: str = Field(description="The release it ran.")
    to_version: str = Field(description="The release it runs now.")


class RollbackMigrationOutput(Output):
    """What rollback_migration returns."""

    service: str = Field(description="The service whose database it was.")
    migration: str = Field(description="The migration reverted.")


class RestartServiceOutput(Output):
    """What restart_service returns."""

    service: str = Field(description="The service restarted.")
    replicas: int = Field(description="The replicas restarted.")


class ScaleServiceOutput(Output):
    """What scale_service returns."""

    service: str = Field(description="The service scaled.")
    from_replicas: int = Field(description="The replicas it ran.")
    replicas: int = Field(description="The replicas it runs now.")


TOOLS = (
    Tool(
        "rollback_deployment",
        "Roll a service back to an earlier release (default: the one "
        "before the current). Right for a bad deploy; on a healthy or innocent service an outage"
        " for nothing." + _COST,
        RollbackDeploymentArgs,
        3.0,
        "operate",
        rollback_deployment,
        output=RollbackDeploymentOutput,
        refusals=(Refusal, UnknownServiceRefusal),
        needs=frozenset({"deploys"}),
        service_args=("service",),
    ),
    Tool(
        "rollback_migration",
        "Revert one applied database migration by id (see "
        "describe_service on the database). Reverting a good migration risks its data." + _COST,
        RollbackMigrationArgs,
        3.0,
        "operate",
        rollback_migration,
        output=RollbackMigrationOutput,
        refusals=(Refusal, UnknownServiceRefusal),
        needs=frozenset({"data"}),
        service_args=("service",),
    ),
    Tool(
        "restart_service",
        "Restart every replica of a service. Clears stuck processes; does "
        "not fix bad code, bad releases or missing capacity." + _COST,
        ServiceArgs,
        2.0,
        "operate",
        restart_service,
        output=RestartServiceOutput,
        refusals=(UnknownServiceRefusal,),
        service_args=("service",),
    ),
    Tool(
        "scale_service",
        "Set a service's replica count to add capacity." + _COST,
        ScaleServiceArgs,
        2.0,
        "operate",
        scale_service,
        output=ScaleServiceOutput,
        refusals=(UnknownServiceRefusal,),
        service_args=("service",),
    ),
)
