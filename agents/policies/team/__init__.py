"""The scripted teams: the scenario's roles, each seat within its view; or three generalists.

A scenario that declares roles (a team family) gets one seat per role (`roles`, its seats in
`seats`); any other gets a commander, an investigator and a fixer (`classic`). Each seat holds
its own seat and runs on its own thread (`callers`), and teammates learn from each other only
in messages: a line for people, then `KIND {json}` lines for teammates (`board`). What a tool
needs of a view is taken from the server's ListTools, not copied here.
"""

from .board import CUE_CHARS, EVIDENCE_CHARS, KINDS, Board, Note, brief
from .callers import WAIT_SECONDS, Look, RoleCaller, TeamCaller, looks
from .classic import ROLE_PLAYS, ROLES, commander, fixer, investigator, play_team
from .roles import RoleSeatPlay, play_role_team, primary
from .seats import REMEDY, RoleSeat, SeatView, reporter_of

__all__ = [
    "CUE_CHARS",
    "EVIDENCE_CHARS",
    "KINDS",
    "REMEDY",
    "ROLES",
    "ROLE_PLAYS",
    "WAIT_SECONDS",
    "Board",
    "Look",
    "Note",
    "RoleCaller",
    "RoleSeat",
    "RoleSeatPlay",
    "SeatView",
    "TeamCaller",
    "brief",
    "commander",
    "fixer",
    "investigator",
    "looks",
    "play_role_team",
    "play_team",
    "primary",
    "reporter_of",
]
