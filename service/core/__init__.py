"""The service's core: sessions, the sequencer, turn policies, attribution and errors.

Sessions with their seats and logs, the sequencer and its turn policies, reward attribution,
and the errors they raise. No gRPC, no protobuf, no storage code: the wire
(`metasre.service.wire`) and the store (`metasre.service.store`) are built on it.
"""

from .attribution import Attribution, RewardMode
from .coordinator import Coordinator, make_episode
from .errors import ServiceError, StoreError, StoreLostError
from .events import (
    Applied,
    Ended,
    Event,
    LogEntry,
    Message,
    Reward,
    Started,
    Turn,
)
from .session import Recorder, Seat, SeatSpec, Session, SessionSpec, TurnPolicy
from .turns import Turns, turns_for

__all__ = [
    "Applied",
    "Attribution",
    "Coordinator",
    "Ended",
    "Event",
    "LogEntry",
    "Message",
    "Recorder",
    "Reward",
    "RewardMode",
    "Seat",
    "SeatSpec",
    "ServiceError",
    "Session",
    "SessionSpec",
    "Started",
    "StoreError",
    "StoreLostError",
    "Turn",
    "TurnPolicy",
    "Turns",
    "make_episode",
    "turns_for",
]
