"""A bounded least-recently-used cache of profiles, one per pod."""

from __future__ import annotations

from collections import OrderedDict

from user_service import config


class ProfileCache:
    """Profiles by user id; the least recently used entry goes first when the cache is full."""

    def __init__(self, max_entries: int = config.PROFILE_CACHE_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self._max = max_entries
        self._entries: OrderedDict[str, dict] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, user_id: str) -> dict | None:
        profile = self._entries.get(user_id)
        if profile is not None:
            self._entries.move_to_end(user_id)
        return profile

    def put(self, user_id: str, profile: dict) -> None:
        self._entries[user_id] = profile
        self._entries.move_to_end(user_id)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def invalidate(self, user_id: str) -> None:
        self._entries.pop(user_id, None)
