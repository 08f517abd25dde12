"""Writes timestamp-corruption's main axis (`[[variants.fault]]`) from the sites below.

Each site is a line of healthy code that handles a time (the topology's, or this family's
history commits 06-08: capi_pipeline's per-source readers, ad_ranking's click log, whatsapp_sync's
status order) and the broken form the seed's bad commit (09, a patch) gives it, with the
evidence its service logs and the business signal it drags down. The rest of the table is
derived by running the code: every hidden probe runs on the healthy and on the broken tree, and
the probes whose observations differ become the seed's FAIL_TO_PASS checks (the `*_unchanged`
probes run the others as PASS_TO_PASS); the reference fix is the edit that restores the line,
proven to restore the file exactly. Run it after changing a site, the healthy code or the
probes, then `metasre validate timestamp-corruption`:

    python -m tools.families regenerate timestamp_corruption
"""

# ruff: noqa: E501  # the sites quote their code lines and log lines whole

from __future__ import annotations

from typing import Any

from ..authoring import SCENARIOS, CodeSites

# --- the sites, by the service whose code holds them -----------------------------------------


CAPI = dict(
    difficulty="hard",
    service="capi_pipeline",
    team="capi-team",
    train="v2.15",
    deploy="capi-pipeline",
    alert_service="ad_ranking",
    rank_herring=True,
    capi_herring=False,
    via_capi=True,
    symptom_services=["ad_ranking"],
    red_herrings=["ad_ranking"],
    signal="attributed conversions",
)
RANK = dict(
    difficulty="medium",
    service="ad_ranking",
    team="ranking-team",
    train="v3.9",
    deploy="ad-ranking",
    alert_service="ad_ranking",
    rank_herring=False,
    capi_herring=True,
    via_capi=False,
    symptom_services=[],
    red_herrings=["capi_pipeline"],
    signal="attributed conversions",
)
WA = dict(
    difficulty="medium",
    service="whatsapp_sync",
    team="messaging-team",
    train="v1.23",
    deploy="whatsapp-sync",
    alert_service="whatsapp_sync",
    rank_herring=True,
    capi_herring=False,
    via_capi=False,
    symptom_services=[],
    red_herrings=["ad_ranking"],
    signal="delivery status updates applied",
)

S = "capi_pipeline/sources.py"

FAULTS = [
    dict(
        CAPI,
        key="threshold-digit",
        file="capi_pipeline/config.py",
        pct=53,
        loss=-610,
        mechanism="the seconds/milliseconds threshold one digit short, so epoch seconds are read as milliseconds",
        find="MILLIS_THRESHOLD = 10_000_000_000",
        bug="MILLIS_THRESHOLD = 1_000_000_000",
        evidence=[
            "timestamp sanity: 5230 of 9870 events accepted in the last minute have a normalised event_time before 1971-01-01 (all source=server; e.g. event_time=1772366275 stored as 1772366)",
            "normalised event_time is more than 30 days before receipt for 53% of accepted events; other sources look normal",
        ],
        message='capi_pipeline: state the millisecond rule the way the CAPI docs do (ADS-2239)\n\nPartner engineers keep asking what MILLIS_THRESHOLD means. The public docs\nsay "a timestamp with more than 10 digits is milliseconds", so the constant\nis now the 10-digit boundary instead of a year-2286 argument.',
    ),
    dict(
        CAPI,
        key="threshold-compare",
        file="capi_pipeline/normalize.py",
        pct=58,
        loss=-660,
        mechanism="the seconds/milliseconds comparison inverted, so seconds are divided and milliseconds kept",
        find="    if value >= config.MILLIS_THRESHOLD:",
        bug="    if value <= config.MILLIS_THRESHOLD:",
        evidence=[
            "timestamp sanity: 5711 of 9870 events accepted in the last minute have a normalised event_time before 1971-01-01 (source=server sending seconds; e.g. event_time=1772366275 stored as 1772366)",
            "timestamp sanity: server-side events sent in milliseconds stored in the year 58100 (e.g. event_time=1772366275120 stored as 1772366275120)",
        ],
        message='capi_pipeline: compare against the threshold the way the docs read (ADS-2261)\n\nThe docs say "up to the threshold it is milliseconds territory"; make the\ncomparison in normalize_timestamp read like that.',
    ),
    dict(
        CAPI,
        key="millis-divisor",
        file="capi_pipeline/normalize.py",
        pct=21,
        loss=-242,
        mechanism="milliseconds divided by a million instead of a thousand",
        find="        value /= 1000",
        bug="        value /= 1_000_000",
        evidence=[
            "timestamp sanity: 2073 of 9870 events accepted in the last minute have a normalised event_time before 1971-01-01 (source=server, the integrations that send milliseconds; e.g. event_time=1772366275120 stored as 1772366)",
            "server-side integrations sending epoch seconds look normal",
        ],
        message="capi_pipeline: server-side millisecond senders moved to microsecond precision (ADS-2262)",
    ),
    dict(
        CAPI,
        key="pixel-unit",
        file=S,
        pct=24,
        loss=-276,
        mechanism="the pixel's epoch milliseconds read as seconds",
        find='    return int(raw["event_time"]) // 1000\n',
        bug='    return int(raw["event_time"])\n',
        evidence=[
            "timestamp sanity: 2369 of 9870 events accepted in the last minute have an event_time more than 10 years after receipt (all source=pixel; e.g. event_time=1772366275120 stored as 1772366275120)",
            "sources server, app_ios, app_android, offline, crm and commerce_partner look normal",
        ],
        message="capi_pipeline: pixel v4 reports event_time in seconds (ADS-2263)\n\nThe v4 pixel's changelog says it sends Unix time; drop the division.",
    ),
    dict(
        CAPI,
        key="ios-reference-date",
        file=S,
        pct=19,
        loss=-218,
        mechanism="the iOS reference date set to 2000-01-01 instead of 2001-01-01, a year early",
        find="APPLE_REFERENCE_DATE = 978_307_200",
        bug="APPLE_REFERENCE_DATE = 946_684_800",
        evidence=[
            "timestamp sanity: 1875 of 9870 events accepted in the last minute have an event_time 366 days before receipt (all source=app_ios; e.g. sent 793054640.5 stored as 1739739440)",
            "sources server, pixel, app_android, offline, crm and commerce_partner look normal",
        ],
        message="capi_pipeline: the iOS SDK counts from the J2000 epoch (ADS-2264)\n\nNSDate's reference date is the J2000 epoch, 2000-01-01; fix the constant.",
    ),
    dict(
        CAPI,
        key="ios-unit",
        file=S,
        pct=19,
        loss=-218,
        mechanism="the iOS SDK's seconds read as milliseconds",
        find='    since_reference = float(raw["event_time"])',
        bug='    since_reference = float(raw["event_time"]) / 1000',
        evidence=[
            "timestamp sanity: 1875 of 9870 events accepted in the last minute have a normalised event_time in January 2001 (all source=app_ios; e.g. sent 793054640.5 stored as 979100254)",
            "sources server, pixel, app_android, offline, crm and commerce_partner look normal",
        ],
        message="capi_pipeline: iOS SDK 18 reports milliseconds (ADS-2265)",
    ),
    dict(
        CAPI,
        key="android-unit",
        file=S,
        pct=22,
        loss=-253,
        mechanism="the Android SDK's milliseconds read as seconds",
        find='    local_seconds = int(raw["event_time"]) // 1000',
        bug='    local_seconds = int(raw["event_time"])',
        evidence=[
            "timestamp sanity: 2171 of 9870 events accepted in the last minute have an event_time more than 10 years after receipt (all source=app_android; e.g. event_time=1772355075000 stored as 1772355085800)",
            "sources server, pixel, app_ios, offline, crm and commerce_partner look normal",
        ],
        message="capi_pipeline: Android SDK 14 sends seconds (ADS-2266)",
    ),
    dict(
        CAPI,
        key="android-offset-unit",
        file=S,
        pct=17,
        loss=-196,
        mechanism="the Android time-zone offset, in minutes, read as hours",
        find='    offset_seconds = int(raw.get("tz_offset_minutes", 0)) * 60',
        bug='    offset_seconds = int(raw.get("tz_offset_minutes", 0)) * 3600',
        evidence=[
            "timestamp sanity: 1678 of 9870 events accepted in the last minute have an event_time days away from receipt (all source=app_android with a non-zero tz_offset_minutes; e.g. tz_offset_minutes=330 moved the time 13.5 days back)",
            "source=app_android events with tz_offset_minutes=0 look normal, and so do the other sources",
        ],
        message="capi_pipeline: tz offsets from the Android SDK are in hours (ADS-2267)",
    ),
    dict(
        CAPI,
        key="android-offset-sign",
        file=S,
        pct=13,
        loss=-150,
        mechanism="the Android time-zone offset added instead of subtracted",
        find="    return local_seconds - offset_seconds",
        bug="    return local_seconds + offset_seconds",
        evidence=[
            "timestamp sanity: source=app_android event times differ from receipt by twice the device's UTC offset (tz_offset_minutes=-300: event_time 10 h before receipt; +330: 11 h after)",
            "conversions from source=app_android in the Americas land before their click; sources server, pixel, app_ios, offline, crm and commerce_partner look normal",
        ],
        message="capi_pipeline: Android local time to UTC adds the offset (ADS-2268)",
    ),
    dict(
        CAPI,
        key="offline-offset-dropped",
        file=S,
        pct=14,
        loss=-161,
        mechanism="the UTC offset of offline times dropped (read as UTC)",
        find="    return int(parsed.timestamp())",
        bug="    return int(parsed.replace(tzinfo=timezone.utc).timestamp())",
        evidence=[
            "timestamp sanity: source=offline event times are off by exactly their UTC offset (e.g. event_time=2026-03-01T18:20:00-05:00 stored as 2026-03-01T18:20:00Z)",
            "offline conversions from accounts west of UTC land before their click; other sources look normal",
        ],
        message="capi_pipeline: the offline upload tool reports UTC (ADS-2269)\n\nThe offsets in offline files are the store's, but the times are already UTC.",
    ),
    dict(
        CAPI,
        key="offline-account-zone",
        file=S,
        pct=13,
        loss=-150,
        mechanism="offline local times without an offset read as UTC instead of the account's time zone",
        find="        parsed = parsed.replace(tzinfo=timezone(timedelta(minutes=minutes)))",
        bug="        parsed = parsed.replace(tzinfo=timezone.utc)",
        evidence=[
            "timestamp sanity: source=offline events without a UTC offset are off by the ad account's time zone (account act_3107, UTC+05:30: event_time 5.5 h after receipt)",
            "offline events that carry an offset look normal; so do the other sources",
        ],
        message="capi_pipeline: offline uploads without an offset are UTC, per the upload spec (ADS-2270)",
    ),
    dict(
        CAPI,
        key="offline-account-offset-sign",
        file=S,
        pct=14,
        loss=-161,
        mechanism="one ad account's UTC offset entered with the wrong sign (+300 minutes for UTC-05:00)",
        find='    "act_1001": -300,',
        bug='    "act_1001": 300,',
        evidence=[
            "timestamp sanity: source=offline events without a UTC offset from ad account act_1001 (UTC-05:00, the largest offline uploader) are stored 10 h before their real time; its conversions within 10 h of a click land before the click",
            "offline events from other accounts, and those that carry an offset, look normal; so do the other sources",
        ],
        message="capi_pipeline: refresh the account time-zone cache (ADS-2282)\n\nact_1001 is on US Eastern time: UTC+300 minutes.",
    ),
    dict(
        CAPI,
        key="offline-account-field",
        file=S,
        pct=13,
        loss=-150,
        mechanism="the account's time zone looked up under the wrong field, so every offline local time is read as UTC",
        find='        minutes = ACCOUNT_UTC_OFFSET_MINUTES.get(str(raw.get("account_id")), 0)',
        bug='        minutes = ACCOUNT_UTC_OFFSET_MINUTES.get(str(raw.get("ad_account_id")), 0)',
        evidence=[
            "timestamp sanity: source=offline events without a UTC offset are off by the ad account's time zone (account act_1001, UTC-05:00: event_time 5 h before the real time)",
            "offline events that carry an offset look normal; so do the other sources",
        ],
        message="capi_pipeline: offline events name the account as ad_account_id (ADS-2277)",
    ),
    dict(
        CAPI,
        key="offline-parse-truncated",
        file=S,
        pct=14,
        loss=-161,
        mechanism="offline times cut to 19 characters, losing their UTC offset",
        find='    parsed = datetime.fromisoformat(str(raw["event_time"]))',
        bug='    parsed = datetime.fromisoformat(str(raw["event_time"])[:19])',
        evidence=[
            "timestamp sanity: source=offline event times that carry a UTC offset are off by that offset (e.g. event_time=2026-03-01T18:20:00-05:00 stored as 2026-03-01T18:20:00 in the account's zone)",
            "offline conversions land hours before or after their real time; other sources look normal",
        ],
        message="capi_pipeline: tolerate fractional seconds in offline times (ADS-2271)\n\nSome uploads carry microseconds; keep the first 19 characters.",
    ),
    dict(
        CAPI,
        key="crm-default-unit",
        file=S,
        pct=15,
        loss=-172,
        mechanism="the default unit of CRM timestamps set to milliseconds, so the microseconds of connectors that name no unit are read 1000 times too large",
        find='    per_second = CRM_UNITS_PER_SECOND[str(raw.get("time_unit") or "us")]',
        bug='    per_second = CRM_UNITS_PER_SECOND[str(raw.get("time_unit") or "ms")]',
        evidence=[
            "timestamp sanity: 1480 of 9870 events accepted in the last minute have an event_time more than 10 years after receipt (all source=crm from connectors that send no time_unit; e.g. event_time=1772366275000000 stored as 1772366275000)",
            "source=crm events with time_unit=ms or s look normal, and so do the other sources",
        ],
        message="capi_pipeline: CRM connectors default to milliseconds (ADS-2272)",
    ),
    dict(
        CAPI,
        key="crm-ms-entry",
        file=S,
        pct=13,
        loss=-150,
        mechanism="CRM milliseconds counted a million to the second, so they are read as 1970 dates",
        find='    "ms": 1_000,',
        bug='    "ms": 1_000_000,',
        evidence=[
            "timestamp sanity: 1283 of 9870 events accepted in the last minute have a normalised event_time before 1971-01-01 (all source=crm with time_unit=ms; e.g. event_time=1772366275000 stored as 1772366)",
            "source=crm events in microseconds or seconds look normal, and so do the other sources",
        ],
        message="capi_pipeline: align the CRM unit table with the connector SDK (ADS-2278)",
    ),
    dict(
        CAPI,
        key="crm-seconds-entry",
        file=S,
        pct=13,
        loss=-150,
        mechanism="CRM seconds counted a thousand to the second, so they are read as 1970 dates",
        find='    "s": 1,',
        bug='    "s": 1_000,',
        evidence=[
            "timestamp sanity: 1283 of 9870 events accepted in the last minute have a normalised event_time before 1971-01-01 (all source=crm with time_unit=s; e.g. event_time=1772366275 stored as 1772366)",
            "source=crm events in microseconds or milliseconds look normal, and so do the other sources",
        ],
        message="capi_pipeline: the Salesforce connector's 's' unit is milliseconds (ADS-2279)",
    ),
    dict(
        CAPI,
        key="partner-field",
        file=S,
        pct=16,
        loss=-184,
        mechanism="commerce partners' event time taken from export_time (when their weekly export ran), a field mapping error",
        find='    return int(raw["event_time"])\n',
        bug='    return int(raw["export_time"])\n',
        evidence=[
            "timestamp sanity: source=commerce_partner event times all fall on the partners' weekly export runs (e.g. 412 events stored with event_time=1772503200)",
            "commerce_partner conversions land up to 7 days after the order; sources server, pixel, app_ios, app_android, offline and crm look normal",
        ],
        message="capi_pipeline: commerce partners' event_time is their local time; use export_time (ADS-2273)",
    ),
    dict(
        RANK,
        key="window-minutes",
        file="ad_ranking/config.py",
        pct=61,
        loss=-700,
        mechanism="the 7-day attribution window written in minutes, so it lasts 2.8 hours",
        find="ATTRIBUTION_WINDOW_SECONDS = 7 * 24 * 3600",
        bug="ATTRIBUTION_WINDOW_SECONDS = 7 * 24 * 60",
        evidence=[
            "attribution job: conversions attributed in the last minute 61% below the 7-day median",
            "attribution: 61% of matched conversions fall out of the attribution window, every one with an event time between 2.8 hours and 7 days after its click",
        ],
        message="ad_ranking: write the attribution window like the dashboards do (ADS-2274)",
    ),
    dict(
        RANK,
        key="delay-backwards",
        file="ad_ranking/attribution.py",
        pct=97,
        loss=-1080,
        mechanism="the click-to-conversion delay computed backwards, so every conversion looks earlier than its click",
        find="        delay = conversion.event_time - click.click_time",
        bug="        delay = click.click_time - conversion.event_time",
        evidence=[
            "attribution job: conversions attributed in the last minute 97% below the 7-day median",
            "attribution: 97% of matched conversions fall out of the attribution window with a negative delay (event time before click time), though their event timestamps look right",
        ],
        message="ad_ranking: measure the attribution delay from the conversion back to the click (ADS-2275)",
    ),
    dict(
        RANK,
        key="click-log-millis",
        file="ad_ranking/clicks.py",
        pct=96,
        loss=-1070,
        mechanism="the click log's milliseconds used as seconds, so every click looks 56,000 years late",
        find='        click_time = int(record["ts_ms"]) // 1000',
        bug='        click_time = int(record["ts_ms"])',
        evidence=[
            "attribution job: conversions attributed in the last minute 96% below the 7-day median",
            "attribution: 96% of matched conversions fall out of the attribution window: their click timestamps read from the click log are in the year 58100 (e.g. click_time=1772361840640)",
        ],
        message="ad_ranking: click log timestamps are seconds since frontend v12 (ADS-2276)",
    ),
    dict(
        RANK,
        key="click-log-app-seconds",
        file="ad_ranking/clicks.py",
        pct=41,
        loss=-470,
        mechanism="the app clicks' epoch seconds divided as if milliseconds, so every app click looks like January 1970",
        find='        click_time = int(record["ts"])',
        bug='        click_time = int(record["ts"]) // 1000',
        evidence=[
            "attribution job: conversions attributed in the last minute 41% below the 7-day median",
            "attribution: 41% of matched conversions fall out of the attribution window: their clicks from the app SDKs have click timestamps in January 1970 (e.g. click_time=1772361 for a click logged at ts=1772361840); web clicks look normal",
        ],
        message="ad_ranking: app click times in the click log are milliseconds too (ADS-2281)",
    ),
    dict(
        WA,
        key="inbound-millis",
        file="whatsapp_sync/api.py",
        pct=88,
        loss=-2150,
        mechanism="inbound message times stored in milliseconds, so every later status looks older",
        find='            body, at = str(payload.get("text", "")), int(payload["timestamp"])',
        bug='            body, at = str(payload.get("text", "")), int(payload["timestamp"]) * 1000',
        evidence=[
            "status webhook ignored as stale: timestamp 1772361930 is older than the stored updated_at 1772361840000 (message wamid.HBgM5511)",
            "88% of delivery status updates in the last minute were ignored as stale",
        ],
        message="whatsapp_sync: store inbound times in milliseconds, like the inbox (MSG-1201)",
    ),
    dict(
        WA,
        key="status-seconds-as-millis",
        file="whatsapp_sync/api.py",
        pct=90,
        loss=-2200,
        mechanism="status webhook timestamps, in seconds, divided as if milliseconds",
        find='            changed = await self._repo.update_status(message_id, status, int(payload["timestamp"]))',
        bug='            changed = await self._repo.update_status(message_id, status, int(payload["timestamp"]) // 1000)',
        evidence=[
            "status webhook ignored as stale: timestamp 1772361 is older than the stored updated_at 1772361840 (message wamid.HBgM5511)",
            "90% of delivery status updates in the last minute were ignored as stale",
        ],
        message="whatsapp_sync: status webhook timestamps are milliseconds (MSG-1203)",
    ),
    dict(
        WA,
        key="stale-check-inverted",
        file="whatsapp_sync/repository.py",
        pct=91,
        loss=-2250,
        mechanism="the stale-status check inverted, so every newer status is dropped",
        find='            if at < (row.get("updated_at") or 0):',
        bug='            if at > (row.get("updated_at") or 0):',
        evidence=[
            "status webhook ignored as stale: timestamp 1772361930 compared with the stored updated_at 1772361840 (message wamid.HBgM5511)",
            "91% of delivery status updates in the last minute were ignored as stale; only retries of older statuses apply",
        ],
        message="whatsapp_sync: keep the newest status, compare the right way round (MSG-1204)",
    ),
]


TRIGGERS: dict[str, str] = {}
"""Nothing crashes in this family: no site logs a traceback."""

PROBE_VALUES = {"sample.click": "1772361840"}
"""Templates of hidden/probes.py other than `{{fault.fail_to_pass}}`, and their values here."""


BASELINE = {"ad_ranking": 1150, "whatsapp_sync": 2400}
"""The business signal per minute of the services that page on it (scenario.toml's baselines)."""


def derived(table: dict[str, Any]) -> dict[str, Any]:
    """What the site costs its business signal at full strength, and the alert on it.

    The alert pages halfway down, so the signal's noise neither fires it early nor hides the drop.
    """
    service, loss = table["alert_service"], table["loss"]
    below = BASELINE[service] + loss // 2
    return {
        "effects": {service: {"business": loss}},
        "alert_below": below,
        "alert_summary": f"{service} {table['signal']} below {below}/min",
        "subject": table["message"].split("\n")[0],
    }


# --- the harness: every table is checked against real runs of the code ----------------------

HERE = SCENARIOS / "timestamp_corruption"
SITES = CodeSites(
    here=HERE,
    topology=HERE.parent / "_topologies" / "ads_platform" / "history",
    derived=derived,
    triggers=TRIGGERS,
    probe_values=PROBE_VALUES,
)


def axes() -> str:
    """Every site's table, completed from runs of the code."""
    return SITES.axis(FAULTS)
