"""The team's message protocol: a line for people, then `KIND {json}` lines for teammates.

The trio passes TRIAGE, DIAGNOSIS and FIXED; a role team's seats pass LEAD, FINDING, CLAIM,
FIXED and DONE (`KINDS`), which each seat reads into its `Board`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..base import ToolCaller
from .callers import WAIT_SECONDS, Look, RoleCaller, TeamCaller

CUE_CHARS = 300
"""A message carries at most this much of the line that decided a diagnosis."""
EVIDENCE_CHARS = 2000
"""And at most this much of the evidence: send_message takes 4000 characters and a log repeats
its lines (a refused message would leave its teammate waiting for it)."""


def brief(evidence: Sequence[str], budget: int = EVIDENCE_CHARS) -> list[str]:
    """The newest distinct lines of `evidence` that fit `budget` characters, oldest first."""
    kept: list[str] = []
    used = 0
    for line in dict.fromkeys(reversed(evidence)):  # newest first, each line once
        cut = line[:CUE_CHARS]
        if used + len(cut) > budget:
            break
        kept.append(cut)
        used += len(cut)
    return kept[::-1]


def note_line(kind: str, body: Mapping[str, Any]) -> str:
    """The structured line of a message: its kind, then its body as JSON."""
    return f"{kind} {json.dumps(body, sort_keys=True)}"


def say(call: ToolCaller, kind: str, body: Mapping[str, Any], to: Sequence[str], note: str) -> None:
    """Send `body` as a `kind` line to the seats `to`, under a line for people watching."""
    call("send_message", {"text": f"{note}\n{note_line(kind, body)}", "to": list(to)})


def _has(message: Mapping[str, Any], kind: str) -> bool:
    return any(text.startswith(f"{kind} ") for text in str(message.get("text", "")).splitlines())


def heard(
    call: TeamCaller,
    kind: str,
    timeout: float = WAIT_SECONDS,
    filler: Callable[[], Look | None] | None = None,
) -> dict[str, Any] | None:
    """The body of the first message of `kind` this seat received, waiting up to `timeout`.

    Turns the seat holds meanwhile go to `filler`'s looks; None if none came in time.
    """
    message = call.wait_message(lambda m: _has(m, kind), timeout, filler)
    if message is None:
        return None
    for text in str(message["text"]).splitlines():
        if text.startswith(f"{kind} "):
            body: dict[str, Any] = json.loads(text[len(kind) + 1 :])
            return body
    return None


@dataclass(frozen=True, slots=True)
class Note:
    """One structured line of a teammate's message."""

    position: int
    """Its message's position in the inbox."""
    sender: str
    kind: str
    body: Mapping[str, Any]


KINDS = ("LEAD", "FINDING", "CLAIM", "FIXED", "DONE")
"""What a role seat tells its teammates: LEAD (a service I see blames one I do not), FINDING (a
fault I cannot fix, for the seat named to fix it), CLAIM (a fault I am fixing), FIXED (a fault
remedied, with what was done), DONE (nothing more from me unless you send me something)."""


class Board:
    """What a seat has heard from its teammates, read from its inbox as it grows."""

    def __init__(self, call: RoleCaller) -> None:
        self.call = call
        self.notes: list[Note] = []
        self.heard = 0
        """How many messages have been read."""
        self.read_from: dict[str, int] = {}
        """Per teammate, how many of its messages have been read (a DONE says so)."""

    def update(self) -> int:
        """Read the new messages; the inbox's length."""
        messages = self.call.inbox()
        for position in range(self.heard, len(messages)):
            m = messages[position]
            sender = str(m.get("from_agent_id", ""))
            self.read_from[sender] = self.read_from.get(sender, 0) + 1
            for line in str(m.get("text", "")).splitlines():
                kind, _, body = line.partition(" ")
                if kind in KINDS and body.startswith("{"):
                    try:
                        parsed = json.loads(body)
                    except ValueError:
                        continue
                    if isinstance(parsed, dict):
                        self.notes.append(
                            Note(position, str(m.get("from_agent_id", "")), kind, parsed)
                        )
        self.heard = len(messages)
        return self.heard

    def of(self, kind: str) -> list[Note]:
        """Every note of `kind`, oldest first."""
        return [n for n in self.notes if n.kind == kind]

    def taken(self) -> set[str]:
        """Services a teammate is on: claimed, handed over for fixing, or fixed."""
        return {
            str(n.body.get("service"))
            for n in self.notes
            if n.kind in ("CLAIM", "FINDING", "FIXED")
        }

    def done_after(self, seat: str, position: int, me: str, sent: int) -> bool:
        """Whether `seat` said DONE after inbox position `position`, having read `sent` of ours.

        Messages cross in flight: a DONE that arrives after work was sent to its seat may have
        been said before that seat read the work (`me` is who sent it, `sent` how many).
        """
        return any(
            n.sender == seat
            and n.position > position
            and int(n.body.get("read", {}).get(me, 0)) >= sent
            for n in self.of("DONE")
        )


__all__ = [
    "CUE_CHARS",
    "EVIDENCE_CHARS",
    "KINDS",
    "Board",
    "Note",
    "brief",
    "heard",
    "note_line",
    "say",
]
