"""Shards: which server of a fleet holds a session, read from the session's own id.

`metasre serve --workers N` runs N servers (shards) behind a directory. Shard `slot` makes
session ids ending in `-s<slot>`, so that any shard, the directory and any client can tell who
holds a session from its id alone, without asking a shared table: a restarted shard takes its
slot (and its sessions, rebuilt from the store) back, so the id stays true.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from .errors import SessionOnOtherShardError

_SHARDED_ID = re.compile(r"^[0-9a-f]{16}-s(\d{1,4})$")

ELSEWHERE_KEY = "metasre-owner-sessions-elsewhere"
"""Metadata from the directory to a shard: the sessions the creating owner holds on the other
shards, which count against its quota there (see `metasre.service.directory`)."""

MAX_SHARDS = 1024
"""The most shards one fleet has (slots 0-1023)."""


def slot_of(session_id: str) -> int | None:
    """The slot of the shard that made `session_id`, or None for a lone server's id."""
    found = _SHARDED_ID.match(session_id)
    return int(found.group(1)) if found else None


@dataclass(frozen=True, slots=True)
class Shard:
    """This server's place in a fleet: its slot, and every slot's endpoint."""

    slot: int
    """This shard's slot, 0 to len(endpoints) - 1."""
    endpoints: tuple[str, ...]
    """host:port serving each slot, in slot order (this shard's own among them)."""

    def __post_init__(self) -> None:
        if not 1 <= len(self.endpoints) <= MAX_SHARDS:
            raise ValueError(f"a fleet has 1 to {MAX_SHARDS} shards, got {len(self.endpoints)}")
        if not 0 <= self.slot < len(self.endpoints):
            raise ValueError(f"shard slot must be in 0-{len(self.endpoints) - 1}, got {self.slot}")

    @property
    def endpoint(self) -> str:
        """Where this shard serves."""
        return self.endpoints[self.slot]

    def new_session_id(self) -> str:
        """A fresh session id that names this shard."""
        return f"{secrets.token_hex(8)}-s{self.slot}"

    def owns(self, session_id: str) -> bool:
        """Whether `session_id` is this shard's to hold (a lone server's ids are nobody's)."""
        return slot_of(session_id) == self.slot

    def elsewhere(self, session_id: str) -> SessionOnOtherShardError | None:
        """The refusal for a session another shard of the fleet holds; None if none does."""
        slot = slot_of(session_id)
        if slot is None or slot == self.slot or slot >= len(self.endpoints):
            return None
        return on_other_shard(session_id, slot, self.endpoints[slot])


def on_other_shard(session_id: str, slot: int, endpoint: str) -> SessionOnOtherShardError:
    """NOT_FOUND naming the shard that holds `session_id`, for the client to go there."""
    return SessionOnOtherShardError(
        f"session {session_id} is held by shard {slot} at {endpoint}, not by this server; "
        "send its calls there (SessionInfo.endpoint says so too)",
        metadata={"owner_shard": str(slot), "owner_endpoint": endpoint},
    )
