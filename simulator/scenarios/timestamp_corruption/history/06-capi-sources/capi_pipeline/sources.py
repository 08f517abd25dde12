"""event_time per integration source: each sends its own clock and unit; all become epoch
seconds (UTC) here.

An event names the integration that posted it in `source`. Server-side integrations, the
default, go through normalize.normalize_timestamp() instead, which tells epoch seconds from
epoch milliseconds by size.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Mapping

# NSDate's reference date, 2001-01-01T00:00:00Z, in epoch seconds (the iOS SDK's clock).
APPLE_REFERENCE_DATE = 978_307_200

# UTC offset of each ad account's reporting time zone, in minutes (a cache of account settings),
# for offline uploads that give a local time without an offset.
ACCOUNT_UTC_OFFSET_MINUTES = {
    "act_1001": -300,
    "act_2044": 60,
    "act_3107": 330,
    "act_5519": -180,
}

# Units a CRM connector may name for its timestamps, in units per second.
CRM_UNITS_PER_SECOND = {
    "s": 1,
    "ms": 1_000,
    "us": 1_000_000,
}


def pixel(raw: Mapping[str, Any]) -> int:
    """Browser pixel: epoch milliseconds, from the page's Date.now()."""
    return int(raw["event_time"]) // 1000


def app_ios(raw: Mapping[str, Any]) -> int:
    """iOS SDK: seconds since NSDate's reference date, as a float."""
    since_reference = float(raw["event_time"])
    return int(since_reference) + APPLE_REFERENCE_DATE


def app_android(raw: Mapping[str, Any]) -> int:
    """Android SDK: wall-clock milliseconds in the device's time zone, and that zone's offset
    from UTC in minutes (`tz_offset_minutes`, east of Greenwich positive)."""
    local_seconds = int(raw["event_time"]) // 1000
    offset_seconds = int(raw.get("tz_offset_minutes", 0)) * 60
    return local_seconds - offset_seconds


def offline(raw: Mapping[str, Any]) -> int:
    """Offline uploads (store sales, call centres): an ISO 8601 local time. With a UTC offset it
    is exact; without one it is in the ad account's reporting time zone."""
    parsed = datetime.fromisoformat(str(raw["event_time"]))
    if parsed.tzinfo is None:
        minutes = ACCOUNT_UTC_OFFSET_MINUTES.get(str(raw.get("account_id")), 0)
        parsed = parsed.replace(tzinfo=timezone(timedelta(minutes=minutes)))
    return int(parsed.timestamp())


def crm(raw: Mapping[str, Any]) -> int:
    """CRM connectors: an epoch timestamp in the unit the connector names (`time_unit`),
    microseconds unless it says otherwise."""
    per_second = CRM_UNITS_PER_SECOND[str(raw.get("time_unit") or "us")]
    return int(raw["event_time"]) // per_second


def commerce_partner(raw: Mapping[str, Any]) -> int:
    """Commerce platforms: `event_time` is when the order was placed (epoch seconds);
    `export_time` is when their weekly export ran, days later."""
    return int(raw["event_time"])


ADAPTERS: dict[str, Callable[[Mapping[str, Any]], int]] = {
    "app_android": app_android,
    "app_ios": app_ios,
    "commerce_partner": commerce_partner,
    "crm": crm,
    "offline": offline,
    "pixel": pixel,
}
"""Each non-server source's reader of event_time, by the `source` name it posts."""
