"""Tools that read and change services' runtime settings (the world's `Knobs`).

Config, feature flags, certificates, clocks, disks, the queues services consume, caches.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field

from ..clock import stamp
from ..errors import OperationError
from ..knobs import (
    CACHE_WARM_LOAD,
    CERTIFICATE_ROTATION_OUTAGE,
    CONFIG_RELOAD_OUTAGE,
    DISK_CLEAN_OUTAGE,
    DISK_FILL_PER_MINUTE,
    LOG_LEVEL_KEY,
    ConfigPush,
)
from ..rewards import OPERATION, UNNEEDED_OPERATION
from ..scenarios.spec import ConfigValue, same_config_type
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

PUSHES_SHOWN = 10
"""get_config lists this many of a service's newest config pushes."""


def _refused(error: str, text: str, **data: Any) -> ToolOutput:
    """An in-world refusal: the code, and a text that says what exists."""
    return ToolOutput(text=f"error: {text}", data={"error": text, **data}, error=error)


def _applied(operation: Operation, command: str, text: str, data: dict[str, Any]) -> ToolOutput:
    return ToolOutput(text=text, data=data, operation=operation, command=command)


def _show(value: ConfigValue) -> str:
    """A config value as the config file spells it (JSON: true, "INFO", 0.5)."""
    return json.dumps(value)


def _ago(ctx: ToolContext, at: float) -> str:
    return f"{ctx.clock - at:.0f} min ago"


# -- get_config ------------------------------------------------------------------------------


class ServiceArgs(Args):
    """Arguments naming one service."""

    service: str = Field(max_length=64, description="Service to act on.")


def get_config(ctx: ToolContext, args: ServiceArgs) -> ToolOutput:
    """A service's runtime settings and their recent changes, as its operators see them."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    knobs = ctx.world.knobs
    svc = knobs.of(args.service)
    now = ctx.clock
    pushes = [p for p in svc.pushes if p.at_minute <= now][-PUSHES_SHOWN:][::-1]
    flags = knobs.flags_of(args.service)
    certs = knobs.certificates_of(args.service)
    queues = knobs.queues_of(args.service)
    disk = svc.disk_used_pct(now)
    data: dict[str, Any] = {
        "service": args.service,
        "config": dict(sorted(svc.config.items())),
        "pushes": [
            {
                "key": p.key,
                "old": p.old,
                "new": p.new,
                "by": p.by,
                "minute": p.at_minute,
                "timestamp": stamp(ctx.start_time, p.at_minute),
                "rollback": p.rollback_of is not None,
            }
            for p in pushes
        ],
        "flags": [
            {
                "name": f.name,
                "rollout_percent": f.rollout_percent,
                "changed_minute": f.changed_at,
                "by": f.by,
                "description": f.description,
            }
            for f in flags
        ],
        "certificates": [
            {
                "name": c.name,
                "hostnames": list(c.hostnames),
                "expires_in_minutes": round(c.expires_at - now, 1),
                "expired": c.expired(now),
            }
            for c in certs
        ],
        "clock_offset_seconds": svc.clock_offset_seconds,
        "disk_used_pct": disk,
        "queues": [
            {"name": q.name, "depth": q.depth, "head_message_id": q.head_message_id} for q in queues
        ],
        "cache_warm": svc.cache_warm,
    }
    lines = [f"{args.service} runtime settings"]
    lines.append("config:")
    lines += [f"  {k} = {_show(v)}" for k, v in data["config"].items()] or ["  (no keys)"]
    lines.append(
        f"config pushes, newest first (last {PUSHES_SHOWN}):" if pushes else "no config pushes"
    )
    lines += [
        f"  {stamp(ctx.start_time, p.at_minute)} ({_ago(ctx, p.at_minute)})"
        f" {'rollback ' if p.rollback_of else ''}{p.key}: {_show(p.old)} -> {_show(p.new)}"
        f" by {p.by}"
        for p in pushes
    ]
    if flags:
        lines.append("feature flags:")
        lines += [
            f"  {f.name}: {f.rollout_percent:g}% (changed {_ago(ctx, f.changed_at)} by {f.by})"
            + (f" - {f.description}" if f.description else "")
            for f in flags
        ]
    if certs:
        lines.append("certificates:")
        lines += [
            f"  {c.name} [{', '.join(c.hostnames)}]: "
            + (
                f"EXPIRED {now - c.expires_at:.0f} min ago"
                if c.expired(now)
                else f"expires in {_duration(c.expires_at - now)}"
            )
            for c in certs
        ]
    lines.append(f"clock offset from NTP: {svc.clock_offset_seconds:+g}s")
    lines.append(f"disk used: {disk:.0f}%")
    if queues:
        lines.append("queues consumed:")
        lines += [
            f"  {q.name}: depth {q.depth}"
            + (f", head message {q.head_message_id}" if q.depth else "")
            for q in queues
        ]
    lines.append(f"cache: {'warm' if svc.cache_warm else 'cold'}")
    return ToolOutput(text="\n".join(lines), data=data)


def _duration(minutes: float) -> str:
    if minutes < 120:
        return f"{minutes:.0f} min"
    if minutes < 2 * 1440:
        return f"{minutes / 60:.0f} h"
    return f"{minutes / 1440:.0f} days"


# -- config ----------------------------------------------------------------------------------


class SetConfigArgs(Args):
    """Arguments of set_config."""

    service: str = Field(max_length=64, description="Service whose config to change.")
    key: str = Field(max_length=128, description="An existing config key (see get_config).")
    value: bool | int | float | Annotated[str, Field(max_length=256)] = Field(
        description="The new value, of the key's type (a number for a number, true/false for a"
        " boolean, a string for a string)."
    )


def set_config(ctx: ToolContext, args: SetConfigArgs) -> ToolOutput:
    """Push a new value of one config key; the service reloads its config."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    config = ctx.world.knobs.of(args.service).config
    if args.key not in config:
        keys = sorted(config)
        return _refused(
            "unknown_config_key",
            f"{args.service} has no config key {args.key!r}; its keys are:"
            f" {', '.join(keys) or 'none'}",
            service=args.service,
            keys=keys,
        )
    value: ConfigValue = args.value
    current = config[args.key]
    # JSON clients send whole numbers as floats.
    whole = isinstance(value, float) and value.is_integer()
    if whole and isinstance(current, int) and not isinstance(current, bool):
        value = int(value)
    if not same_config_type(current, value):
        return _refused(
            "config_type_mismatch",
            f"{args.service} {args.key} is a {type(current).__name__} (now {_show(current)});"
            f" {_show(value)} is a {type(value).__name__}",
            service=args.service,
            key=args.key,
            current=current,
        )
    push = ctx.world.knobs.set_config(args.service, args.key, value, ctx.clock, ctx.agent_id)
    return _pushed(push, f"{args.service} {args.key}={_show(push.new)}")


def rollback_config(ctx: ToolContext, args: ServiceArgs) -> ToolOutput:
    """Revert the newest config push of a service."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    try:
        push = ctx.world.knobs.rollback_config(args.service, ctx.clock, ctx.agent_id)
    except OperationError as exc:
        return _refused("no_config_push", str(exc), service=args.service)
    return _pushed(push, args.service)


def _pushed(push: ConfigPush, command: str) -> ToolOutput:
    verb = "rolled back" if push.rollback_of is not None else "set"
    return _applied(
        Operation(service=push.service, knob=f"config:{push.key}"),
        command,
        f"{verb} {push.service} {push.key}: {_show(push.old)} -> {_show(push.new)};"
        " config reloaded",
        {"service": push.service, "key": push.key, "old": push.old, "new": push.new},
    )


# -- flags -----------------------------------------------------------------------------------


class SetFeatureFlagArgs(Args):
    """Arguments of set_feature_flag."""

    flag: str = Field(max_length=64, description="Feature flag name (see get_config).")
    rollout_percent: float = Field(
        ge=0, le=100, description="Share of traffic that gets the feature, 0-100 (0 turns it off)."
    )


def set_feature_flag(ctx: ToolContext, args: SetFeatureFlagArgs) -> ToolOutput:
    """Set a feature flag's rollout."""
    knobs = ctx.world.knobs
    if args.flag not in knobs.flags:
        # Only the flags of services the seat sees: the rest are what its view hides.
        flags = sorted(n for n, f in knobs.flags.items() if ctx.view.sees(f.service))
        return _refused(
            "unknown_flag",
            f"no feature flag named {args.flag!r}; flags are: {', '.join(flags) or 'none'}",
            flags=flags,
        )
    previous = knobs.set_flag(args.flag, args.rollout_percent, ctx.clock, ctx.agent_id)
    owner = knobs.flags[args.flag].service
    return _applied(
        Operation(service=owner, knob=f"flag:{args.flag}"),
        f"{args.flag} {args.rollout_percent:g}%",
        f"feature flag {args.flag} ({owner}): {previous:g}% -> {args.rollout_percent:g}%",
        {
            "flag": args.flag,
            "service": owner,
            "from_percent": previous,
            "rollout_percent": args.rollout_percent,
        },
    )


# -- certificates, clocks, disks, queues, caches ---------------------------------------------


class RenewCertificateArgs(Args):
    """Arguments of renew_certificate."""

    service: str = Field(max_length=64, description="Service the certificate belongs to.")
    certificate: str = Field(max_length=64, description="Certificate name (see get_config).")


def renew_certificate(ctx: ToolContext, args: RenewCertificateArgs) -> ToolOutput:
    """Issue a fresh certificate for the same hostnames, valid for 90 days."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    knobs = ctx.world.knobs
    names = [c.name for c in knobs.certificates_of(args.service)]
    if args.certificate not in names:
        return _refused(
            "unknown_certificate",
            f"{args.service} has no certificate {args.certificate!r}; its certificates are:"
            f" {', '.join(names) or 'none'}",
            service=args.service,
            certificates=names,
        )
    cert = knobs.renew_certificate(args.service, args.certificate, ctx.clock, ctx.agent_id)
    return _applied(
        Operation(service=args.service, knob=f"certificate:{args.certificate}"),
        f"{args.service} {args.certificate}",
        f"renewed certificate {cert.name} of {args.service} for {', '.join(cert.hostnames)};"
        " valid for 90 days; TLS sessions re-established",
        {"service": args.service, "certificate": cert.name, "hostnames": list(cert.hostnames)},
    )


def sync_clock(ctx: ToolContext, args: ServiceArgs) -> ToolOutput:
    """Step a service's clock to NTP time."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    previous = ctx.world.knobs.sync_clock(args.service, ctx.clock, ctx.agent_id)
    return _applied(
        Operation(service=args.service, knob="clock"),
        args.service,
        f"stepped the clock of {args.service} to NTP time (offset was {previous:+g}s)",
        {"service": args.service, "previous_offset_seconds": previous},
    )


def clean_disk(ctx: ToolContext, args: ServiceArgs) -> ToolOutput:
    """Rotate and delete a service's old logs."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    before, after = ctx.world.knobs.clean_disk(args.service, ctx.clock, ctx.agent_id)
    return _applied(
        Operation(service=args.service, knob="disk"),
        args.service,
        f"rotated and deleted old logs on {args.service}: disk {before:.0f}% -> {after:.0f}% used",
        {"service": args.service, "disk_used_before_pct": before, "disk_used_pct": after},
    )


class SkipMessageArgs(Args):
    """Arguments of skip_message."""

    queue: str = Field(max_length=64, description="Queue whose head message to dead-letter.")


def skip_message(ctx: ToolContext, args: SkipMessageArgs) -> ToolOutput:
    """Move a queue's head message to the dead-letter queue, unprocessed."""
    knobs = ctx.world.knobs
    if args.queue not in knobs.queues:
        # Only the queues of services the seat sees: the rest are what its view hides.
        queues = sorted(n for n, q in knobs.queues.items() if ctx.view.sees(q.service))
        return _refused(
            "unknown_queue",
            f"no queue named {args.queue!r}; queues are: {', '.join(queues) or 'none'}",
            queues=queues,
        )
    consumer = knobs.queues[args.queue].service
    try:
        skipped = knobs.skip_message(args.queue, ctx.clock, ctx.agent_id)
    except OperationError as exc:
        return _refused("queue_empty", str(exc), queue=args.queue)
    depth = knobs.queues[args.queue].depth
    return _applied(
        Operation(service=consumer, knob=f"queue:{args.queue}"),
        args.queue,
        f"dead-lettered message {skipped} from {args.queue} (it will not be processed);"
        f" {depth} messages left for {consumer}",
        {"queue": args.queue, "service": consumer, "message_id": skipped, "depth": depth},
    )


def warm_cache(ctx: ToolContext, args: ServiceArgs) -> ToolOutput:
    """Pre-load a service's cache."""
    if args.service not in ctx.world.services:
        return unknown_service(ctx, args.service)
    was_warm = ctx.world.knobs.warm_cache(args.service, ctx.clock, ctx.agent_id)
    return _applied(
        Operation(service=args.service, knob="cache"),
        args.service,
        f"pre-loaded the cache of {args.service}" + (" (it was warm already)" if was_warm else ""),
        {"service": args.service, "was_warm": was_warm},
    )


_COST = (
    f" Every operation costs {-OPERATION:g} reward at once; one the incident did not need (not"
    f" its remedy, the wrong key or flag, or a repeat) costs {-UNNEEDED_OPERATION:g} of the"
    " grade, settled when the episode ends."
)


class SettingRefusal(Refusal):
    """A settings call the world refused; the fields that name what exists depend on the error."""

    service: str | None = Field(None, description="The service asked about.")
    keys: list[str] | None = Field(None, description="unknown_config_key: the service's keys.")
    key: str | None = Field(None, description="config_type_mismatch: the key.")
    current: ConfigValue | None = Field(
        None, description="config_type_mismatch: the key's value now, of the type it takes."
    )
    flags: list[str] | None = Field(None, description="unknown_flag: the flags that exist.")
    certificates: list[str] | None = Field(
        None, description="unknown_certificate: the service's certificates."
    )
    queues: list[str] | None = Field(None, description="unknown_queue: the queues that exist.")
    queue: str | None = Field(None, description="queue_empty: the queue.")


class ConfigPushRow(Output):
    """One config push."""

    key: str = Field(description="The key changed.")
    old: ConfigValue = Field(description="Its value before.")
    new: ConfigValue = Field(description="Its value after.")
    by: str = Field(description="Who pushed it.")
    minute: float = Field(description="When, in simulated minutes (negative: before the page).")
    timestamp: str = Field(description="When, in UTC (ISO 8601).")
    rollback: bool = Field(description="True when it undid an earlier push.")


class FlagRow(Output):
    """One feature flag a service owns."""

    name: str = Field(description="The flag (for set_feature_flag).")
    rollout_percent: float = Field(description="Share of traffic that gets the feature, 0-100.")
    changed_minute: float = Field(description="When it last changed, in simulated minutes.")
    by: str = Field(description="Who changed it.")
    description: str = Field(description="What the feature is.")


class CertificateRow(Output):
    """One TLS certificate of a service."""

    name: str = Field(description="The certificate (for renew_certificate).")
    hostnames: list[str] = Field(description="The hostnames it covers.")
    expires_in_minutes: float = Field(description="Minutes to expiry (negative: expired).")
    expired: bool = Field(description="True once it has expired.")


class QueueRow(Output):
    """One queue a service consumes."""

    name: str = Field(description="The queue (for skip_message).")
    depth: int = Field(description="Messages waiting.")
    head_message_id: str = Field(description="The message at its head ('' when empty).")


class GetConfigOutput(Output):
    """What get_config returns."""

    service: str = Field(description="The service.")
    config: dict[str, ConfigValue] = Field(description="Its config keys and values now.")
    pushes: list[ConfigPushRow] = Field(
        description=f"Its newest config pushes, newest first (at most {PUSHES_SHOWN})."
    )
    flags: list[FlagRow] = Field(description="The feature flags it owns.")
    certificates: list[CertificateRow] = Field(description="Its TLS certificates.")
    clock_offset_seconds: float = Field(description="Its clock's offset from NTP time.")
    disk_used_pct: float = Field(description="Disk used, 0-100.")
    queues: list[QueueRow] = Field(description="The queues it consumes.")
    cache_warm: bool = Field(description="Whether its cache is warm.")


class ConfigPushOutput(Output):
    """What set_config and rollback_config return."""

    service: str = Field(description="The service.")
    key: str = Field(description="The key changed.")
    old: ConfigValue = Field(description="Its value before.")
    new: ConfigValue = Field(description="Its value now.")


class SetFeatureFlagOutput(Output):
    """What set_feature_flag returns."""

    flag: str = Field(description="The flag.")
    service: str = Field(description="The service that owns it.")
    from_percent: float = Field(description="Its rollout before.")
    rollout_percent: float = Field(description="Its rollout now.")


class RenewCertificateOutput(Output):
    """What renew_certificate returns."""

    service: str = Field(description="The service.")
    certificate: str = Field(description="The certificate renewed.")
    hostnames: list[str] = Field(description="The hostnames it covers.")


class SyncClockOutput(Output):
    """What sync_clock returns."""

    service: str = Field(description="The service.")
    previous_offset_seconds: float = Field(description="Its clock's offset before the step.")


class CleanDiskOutput(Output):
    """What clean_disk returns."""

    service: str = Field(description="The service.")
    disk_used_before_pct: float = Field(description="Disk used before, 0-100.")
    disk_used_pct: float = Field(description="Disk used now, 0-100.")


class SkipMessageOutput(Output):
    """What skip_message returns."""

    queue: str = Field(description="The queue.")
    service: str = Field(description="The service that consumes it.")
    message_id: str = Field(description="The message dead-lettered.")
    depth: int = Field(description="Messages left.")


class WarmCacheOutput(Output):
    """What warm_cache returns."""

    service: str = Field(description="The service.")
    was_warm: bool = Field(description="True when its cache was warm already.")


TOOLS = (
    Tool(
        "get_config",
        "Read a service's runtime settings: its config keys and values, its recent config"
        " pushes (key, old -> new, who, when), the feature flags it owns, its TLS certificates"
        " and their expiry, its clock offset from NTP, disk usage, the queues it consumes"
        " (depth, head message) and whether its cache is warm. A config push or flag change"
        " shortly before the page is a suspect, as a deploy would be.",
        ServiceArgs,
        0.5,
        "investigate",
        get_config,
        output=GetConfigOutput,
        refusals=(UnknownServiceRefusal,),
        inline=True,
        service_args=("service",),
    ),
    Tool(
        "set_config",
        "Set one existing config key of a service to a new value of the same type; the"
        f" service reloads its config (errors for {CONFIG_RELOAD_OUTAGE[0]} minute while it"
        " does)." + _COST,
        SetConfigArgs,
        1.0,
        "operate",
        set_config,
        output=ConfigPushOutput,
        refusals=(SettingRefusal, UnknownServiceRefusal),
        service_args=("service",),
    ),
    Tool(
        "rollback_config",
        "Revert the newest config push of a service (call again to revert the one before);"
        f" the service reloads its config (errors for {CONFIG_RELOAD_OUTAGE[0]} minute)." + _COST,
        ServiceArgs,
        1.0,
        "operate",
        rollback_config,
        output=ConfigPushOutput,
        refusals=(SettingRefusal, UnknownServiceRefusal),
        service_args=("service",),
    ),
    Tool(
        "set_feature_flag",
        "Set a feature flag's rollout percent (0 turns the feature off for everyone). Takes"
        " effect at once on the service that owns it." + _COST,
        SetFeatureFlagArgs,
        0.5,
        "operate",
        set_feature_flag,
        output=SetFeatureFlagOutput,
        refusals=(SettingRefusal,),
        service_args=("flag",),
    ),
    Tool(
        "renew_certificate",
        "Issue a fresh TLS certificate (valid 90 days, same hostnames) for one of a service's"
        f" certificates; open TLS sessions reset ({CERTIFICATE_ROTATION_OUTAGE[0]} minute of"
        " errors)." + _COST,
        RenewCertificateArgs,
        2.0,
        "operate",
        renew_certificate,
        output=RenewCertificateOutput,
        refusals=(SettingRefusal, UnknownServiceRefusal),
        service_args=("service",),
    ),
    Tool(
        "sync_clock",
        "Step a service's system clock to NTP time (offset 0)." + _COST,
        ServiceArgs,
        0.5,
        "operate",
        sync_clock,
        output=SyncClockOutput,
        refusals=(UnknownServiceRefusal,),
        service_args=("service",),
    ),
    Tool(
        "clean_disk",
        "Rotate and delete a service's old logs, freeing its disk back to its baseline. A disk"
        f" filled by {LOG_LEVEL_KEY}=DEBUG fills again ({DISK_FILL_PER_MINUTE:g} point per"
        " minute) until the log level is fixed. Log writers stall briefly"
        f" ({DISK_CLEAN_OUTAGE[0]} minute)." + _COST,
        ServiceArgs,
        1.0,
        "operate",
        clean_disk,
        output=CleanDiskOutput,
        refusals=(UnknownServiceRefusal,),
        service_args=("service",),
    ),
    Tool(
        "skip_message",
        "Dead-letter the head message of a queue: it is removed unprocessed (its work is"
        " lost unless replayed later), and the consumer moves on to the next." + _COST,
        SkipMessageArgs,
        0.5,
        "operate",
        skip_message,
        output=SkipMessageOutput,
        refusals=(SettingRefusal,),
        service_args=("queue",),
    ),
    Tool(
        "warm_cache",
        "Pre-load a service's cache from its backing store (adds CPU load for"
        f" {CACHE_WARM_LOAD[0]} minutes). A restart empties an in-process cache." + _COST,
        ServiceArgs,
        2.0,
        "operate",
        warm_cache,
        output=WarmCacheOutput,
        refusals=(UnknownServiceRefusal,),
        service_args=("service",),
    ),
)
