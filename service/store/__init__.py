"""Where sessions are kept, and how they come back.

The store contract (`Store`) and its two kinds, chosen by `open_store`: the SQLite file (the
default) with its lock, and PostgreSQL for a fleet (`postgres`, imported only when a
postgresql:// store is named: it needs the `postgres` extra); the codec between log events and
stored rows (and the recorder that writes them), recovery of the sessions a dead server left
open, and the export of stored episodes. Built on `metasre.service.core`.
"""

from .codec import KINDS, StoreRecorder, entry_of, event_record
from .contract import EventRow, SessionRow, Store, StoreHold
from .export import episodes, write_jsonl
from .lock import StoreInUseError, StoreLock
from .opening import describe_store, hold_store, open_store
from .recovery import RecoveryError, rebuild
from .sqlite import TrajectoryStore

__all__ = [
    "KINDS",
    "EventRow",
    "RecoveryError",
    "SessionRow",
    "Store",
    "StoreHold",
    "StoreInUseError",
    "StoreLock",
    "StoreRecorder",
    "TrajectoryStore",
    "describe_store",
    "entry_of",
    "episodes",
    "event_record",
    "hold_store",
    "open_store",
    "rebuild",
    "write_jsonl",
]
