"""Team tools: hints, messages between agents, and the incident report that ends the episode."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..report import IncidentReport
from ..rewards import HINT_PRICES, HINT_REPEAT_PRICE
from .base import (
    Args,
    NoArgs,
    Output,
    TeamMessage,
    Tool,
    ToolContext,
    ToolOutput,
)


def ask_hint(ctx: ToolContext, args: NoArgs) -> ToolOutput:
    """A senior SRE's nudge; each one is more direct, and each costs reward."""
    truth = ctx.instance.spec.ground_truth
    hints = [
        "Follow the failing services toward their dependencies; the loudest alert is not "
        "always where the fault lives.",
        f"The fault lives in {truth.service}.",
        f"Look at {truth.location}.",
    ]
    level = min(ctx.hints_given, len(hints) - 1)
    return ToolOutput(
        text=f"hint {level + 1}/{len(hints)}: {hints[level]}",
        data={"level": level + 1, "hint": hints[level]},
        hint=True,
    )


class SendMessageArgs(Args):
    """Arguments of send_message."""

    text: str = Field(min_length=1, max_length=4000, description="What to tell teammates.")
    to: list[Annotated[str, Field(max_length=64)]] | None = Field(
        None,
        max_length=16,
        description="Agent ids to tell ('*' for all); omit for the team. At most 16 ids of 64 "
        "characters each.",
    )


def send_message(ctx: ToolContext, args: SendMessageArgs) -> ToolOutput:
    """Share a finding with teammates."""
    to = sorted(set(args.to)) if args.to else ["*"]
    return ToolOutput(
        text=f"message sent to {', '.join(to)}",
        data={"from": ctx.agent_id, "to": to, "text": args.text},
        message=TeamMessage(to=tuple(to), text=args.text),
    )


def submit_report(ctx: ToolContext, args: IncidentReport) -> ToolOutput:
    """File the incident report; this ends the episode for the whole team."""
    return ToolOutput(
        text="incident report filed; the episode is over and is being graded",
        data={"report": args.model_dump()},
        report=args,
    )


class AskHintOutput(Output):
    """What ask_hint returns."""

    level: int = Field(description="The hint's level: 1, 2, 3; each is more direct.")
    hint: str = Field(description="The hint.")


class SendMessageOutput(Output):
    """What send_message returns."""

    from_: str = Field(alias="from", description="The sender's agent id.")
    to: list[str] = Field(description="The recipients' agent ids; ['*'] is the whole team.")
    text: str = Field(description="The message.")


class SubmitReportOutput(Output):
    """What submit_report returns: the report as filed."""

    report: IncidentReport = Field(description="The report, its defaults filled in.")


TOOLS = (
    Tool(
        "ask_hint",
        "Ask a senior SRE for a hint. Each is more direct than the last and costs grade by what"
        " it reveals: the first, a general direction, "
        + f"{HINT_PRICES[0]:g}; the second names the root service, {HINT_PRICES[1]:g}; the"
        f" third names its location, {HINT_PRICES[2]:g}; any more repeat the third,"
        f" {HINT_REPEAT_PRICE:g} each.",
        NoArgs,
        1.0,
        "team",
        ask_hint,
        output=AskHintOutput,
        refusals=(),
        gives_hints=True,
    ),
    Tool(
        "send_message",
        "Send a message to teammates (all, or some by agent id): share what "
        "you found, ask for help, split the work.",
        SendMessageArgs,
        0.1,
        "team",
        send_message,
        output=SendMessageOutput,
        refusals=(),
        inline=True,
        sends_message=True,
        names_agents="to",
    ),
    Tool(
        "submit_report",
        "File the incident report and end the episode for the whole team. "
        "Submit once the cause is fixed and verified: the grade checks the fix, the tests, the "
        "time taken and each report field.",
        IncidentReport,
        1.0,
        "team",
        submit_report,
        output=SubmitReportOutput,
        refusals=(),
        ends_episode=True,
    ),
)
