"""Where sessions are kept, and how they come back.

The SQLite trajectory store and its lock, the codec between log events and stored rows (and
the recorder that writes them), recovery of the sessions a dead server left open, and the export
of stored episodes. Built on `metasre.service.core`.
"""

from metasre.service.store.codec import KINDS, StoreRecorder, entry_of, event_record
from metasre.service.store.export import episodes, write_jsonl
from metasre.service.store.lock import StoreInUseError, StoreLock
from metasre.service.store.recovery import RecoveryError, rebuild
from metasre.service.store.sqlite import EventRow, SessionRow, TrajectoryStore

__all__ = [
    "KINDS",
    "EventRow",
    "RecoveryError",
    "SessionRow",
    "StoreInUseError",
    "StoreLock",
    "StoreRecorder",
    "TrajectoryStore",
    "entry_of",
    "episodes",
    "event_record",
    "rebuild",
    "write_jsonl",
]
