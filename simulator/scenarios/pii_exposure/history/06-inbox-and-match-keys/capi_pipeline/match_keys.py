"""Advertiser match keys: the user_data of a CAPI event, normalised and SHA-256 hashed.

Raw e-mail addresses and phone numbers never leave this module: events are stored, logged and
answered with hashes or key names only (policy DLP-3).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from capi_pipeline.normalize import ConversionEvent, InvalidEvent, normalize_event

logger = logging.getLogger("capi_pipeline.match_keys")


def normalize_email(email: str) -> str:
    """Trimmed and lower-cased, as the advertiser's side normalises it before hashing."""
    return email.strip().lower()


def normalize_phone(phone: str) -> str:
    """Digits only, country code included."""
    return "".join(ch for ch in phone if ch.isdigit())


def sha256(value: str) -> str:
    """Hex SHA-256 of a normalised value."""
    return hashlib.sha256(value.encode()).hexdigest()


def describe(user_data: Mapping[str, Any]) -> str:
    """What an error or a log line may say about user_data: its keys, never its values."""
    return ", ".join(sorted(k for k, v in user_data.items() if v)) or "nothing"


def match_keys(user_data: Mapping[str, Any]) -> dict[str, str]:
    """The hashed match keys of one event: em (e-mail), ph (phone), external_id.

    Raises:
        InvalidEvent: em is not one e-mail address.
    """
    keys: dict[str, str] = {}
    email = normalize_email(str(user_data.get("em") or ""))
    if email and email.count("@") != 1:
        raise InvalidEvent(f"user_data.em is not one e-mail address (sent: {describe(user_data)})")
    if email:
        keys["em"] = sha256(email)
    phone = normalize_phone(str(user_data.get("ph") or ""))
    if phone:
        keys["ph"] = sha256(phone)
    external_id = str(user_data.get("external_id") or "").strip()
    if external_id:
        keys["external_id"] = sha256(external_id)
    return keys


@dataclass(frozen=True, slots=True)
class MatchedEvent:
    """A normalised event and the hashed match keys attribution joins it on."""

    event: ConversionEvent
    keys: dict[str, str]


class MatchKeyIngestor:
    """POST /v1/events with user_data: normalises each event and hashes its match keys."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        """The conversion_match_keys rows written, oldest first."""

    def ingest(self, batch: Sequence[Mapping[str, Any]]) -> tuple[int, tuple[str, ...]]:
        """Store the valid events of a batch: how many were stored, one reason per rejection."""
        rejected: list[str] = []
        for raw in batch:
            user_data = raw.get("user_data") or {}
            try:
                event = normalize_event(raw)
                keys = match_keys(user_data)
            except InvalidEvent as exc:
                rejected.append(f"event {raw.get('event_id') or '?'}: {exc}")
                logger.warning(
                    "capi event rejected",
                    extra={"reason": str(exc), "user_data": describe(user_data)},
                )
                continue
            logger.info(
                "capi match keys", extra={"event_id": event.event_id, "match_keys": sorted(keys)}
            )
            self.rows.append(self._row(MatchedEvent(event, keys)))
        return len(batch) - len(rejected), tuple(rejected)

    @staticmethod
    def _row(matched: MatchedEvent) -> dict[str, Any]:
        """The conversion_match_keys row of one event."""
        return {
            "event_id": matched.event.event_id,
            "event_name": matched.event.event_name,
            "keys": dict(sorted(matched.keys.items())),
        }
