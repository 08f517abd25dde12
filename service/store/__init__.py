"""Where sessions are kept, and how they come back.

The store contract (`Store`) and its two kinds, chosen by `open_store`: the SQLite file (the
default) with its lock, and PostgreSQL for a fleet (`postgres`, imported only when a
postgresql:// store is named: it needs the `postgres` extra); the codec between log events and
stored rows (and the recorder that writes them), recovery of the sessions a dead server left
open, and the export of stored episodes. Built on `metasre.service.core`.
"""

from metasre.service.store.codec import KINDS, StoreRecorder, entry_of, event_record
from metasre.service.store.contract import EventRow, SessionRow, Store, StoreHold
from metasre.service.store.export import episodes, write_jsonl
from metasre.service.store.lock import StoreInUseError, StoreLock
from metasre.service.store.opening import describe_store, hold_store, open_store
from metasre.service.store.recovery import RecoveryError, rebuild
from metasre.service.store.sqlite import TrajectoryStore

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
