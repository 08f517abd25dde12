"""Writes migration-cascade's main axis (`[[variants.fault]]`) and its history commits 06-29.

The migrate job applies one of eight batches of three migrations (0005, 0006, 0007), each
migration in its own history commit gated by `fault.batch`. Any of the 24 can be the bad one:
its file has one `{{fault.sN}}` slot that takes the broken form in the seeds where it is bad and
the healthy form otherwise. A bad migration breaks the writes to some tables; the postgres
errors, the services' own errors, the effects, the health checks and the report all follow from
those tables, so they are derived here rather than typed into each table. Run it after changing
a migration, a writer or a mechanism, then `metasre validate migration-cascade`:

    python -m tools.families regenerate migration_cascade
"""

# ruff: noqa: E501  # the migrations' SQL stays line for line as its files show it, indented

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from typing import Any

from ..authoring import SCENARIOS, fault_axis

HERE = SCENARIOS / "migration_cascade"
FIRST_COMMIT = 6
"""The topology's history ends at 05; the batches' commits follow."""
SLOTS = ("s5", "s6", "s7")
APPS = ("capi_pipeline", "ad_ranking", "whatsapp_sync")


@dataclass(frozen=True, slots=True)
class Writer:
    """The service that writes one table, and how its failure shows."""

    service: str
    table: str
    statement: str
    call: str
    """What the service was doing, as its error line starts."""
    consequence: str
    row: str
    """A typical row it writes, as postgres prints a failing row."""


WRITERS = {
    "CE": Writer(
        "capi_pipeline",
        "conversion_events",
        "INSERT INTO conversion_events (event_id, event_name, event_time, click_id,"
        " value_micros, currency) VALUES ($1, $2, $3, $4, $5, $6)"
        " ON CONFLICT (event_id) DO NOTHING",
        "POST /v1/events 500",
        "batch not acknowledged, the advertiser will retry",
        "evt-7741203, Purchase, 1764641460, clk-55120, 24990000, USD, 2026-12-02 02:11:07+00",
    ),
    "ADS": Writer(
        "ad_ranking",
        "ads",
        "INSERT INTO ads (ad_id, campaign_id, bid_micros) VALUES ($1, $2, $3)"
        " ON CONFLICT (ad_id) DO UPDATE SET bid_micros = EXCLUDED.bid_micros",
        "campaign sync PUT /v1/ads/ad-88213 500",
        "the campaign API will retry the sync",
        "ad-88213, cmp-4410, 1850000, 2026-12-02 02:11:09+00",
    ),
    "CLK": Writer(
        "ad_ranking",
        "ad_clicks",
        "INSERT INTO ad_clicks (click_id, ad_id, click_time) VALUES ($1, $2, $3)",
        "POST /v1/clicks 500",
        "click not recorded",
        "clk-55187, ad-88213, 1764641472",
    ),
    "WU": Writer(
        "whatsapp_sync",
        "wa_users",
        "INSERT INTO wa_users (user_id, display_name, phone, email, locale)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id) DO NOTHING",
        "contact sync of new WhatsApp users failed",
        "the sync retries next minute",
        "u-20417, Padaria Lima, +1 415 555 0100, contato@lima.example, pt_BR, f",
    ),
    "WM": Writer(
        "whatsapp_sync",
        "wa_messages",
        "INSERT INTO wa_messages (message_id, user_id, body, status, updated_at)"
        " VALUES ($1, $2, $3, 'received', $4)",
        "POST /v1/webhooks/inbound 500",
        "WhatsApp will redeliver",
        "wamid-9f31c2, u-20417, , received, 1764641475",
    ),
}
WHATSAPP_TABLES = frozenset({"WU", "WM"})

EFFECTS: dict[str, dict[str, dict[str, float]]] = {
    "CE": {
        "capi_pipeline": {"error_rate": 0.44, "p99_ms": 140, "queue_depth": 60},
        # Attribution starves downstream of capi_pipeline.
        "ad_ranking": {"business": -820},
    },
    "ADS": {"ad_ranking": {"error_rate": 0.26, "p99_ms": 90}},
    "CLK": {"ad_ranking": {"error_rate": 0.31, "p99_ms": 60, "business": -700}},
    "WU": {"whatsapp_sync": {"error_rate": 0.24, "queue_depth": 25}},
    "WM": {"whatsapp_sync": {"error_rate": 0.34, "queue_depth": 40, "p99_ms": 90}},
}
"""What a table's writes failing does at full strength (every write of it fails)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One table a bad migration breaks."""

    table: str
    """A key of WRITERS."""
    postgres: tuple[str, ...]
    """The ERROR, DETAIL and STATEMENT lines postgres logs."""
    error: str
    """The driver's exception, as the writing service logs it."""
    constraint: str
    """What rejects the writes, in words."""
    share: float = 1.0
    """The share of the table's writes that fail."""
    app: str = ""
    """The service's error line ({db}: the database), when its statements time out rather than
    fail."""
    app_service: str = ""
    """Who logs `app`, when not the table's writer (a reader whose queries time out)."""
    effects: dict[str, dict[str, float]] | None = None
    """What it does at full strength, when not the table's EFFECTS."""


def _lines(w: Writer, error: str, detail: str) -> tuple[str, ...]:
    return (f"ERROR:  {error}", f"DETAIL:  {detail}", f"STATEMENT:  {w.statement}")


def not_null(table: str, column: str) -> Hit:
    """A NOT NULL column the writer does not fill."""
    w = WRITERS[table]
    error = f'null value in column "{column}" of relation "{w.table}" violates not-null constraint'
    return Hit(
        table,
        _lines(w, error, f"Failing row contains ({w.row}, null)."),
        f"NotNullViolation on column {column}",
        f"column {w.table}.{column} (NOT NULL)",
    )


def check(table: str, name: str, share: float = 1.0, row: str = "") -> Hit:
    """A check constraint the writer's rows violate."""
    w = WRITERS[table]
    error = f'new row for relation "{w.table}" violates check constraint "{name}"'
    detail = f"Failing row contains ({row or w.row})."
    return Hit(
        table,
        _lines(w, error, detail),
        f"CheckViolation on {name}",
        f"check constraint {name}",
        share,
    )


def foreign_key(table: str, name: str, column: str, parent: str) -> Hit:
    """A NOT NULL DEFAULT '' foreign key: '' references nothing."""
    w = WRITERS[table]
    error = f'insert or update on table "{w.table}" violates foreign key constraint "{name}"'
    detail = f'Key ({column})=() is not present in table "{parent}".'
    return Hit(
        table, _lines(w, error, detail), f"ForeignKeyViolation on {name}", f"foreign key {name}"
    )


def unique(table: str, name: str, columns: str, values: str, share: float) -> Hit:
    """A unique index that ordinary writes violate."""
    w = WRITERS[table]
    error = f'duplicate key value violates unique constraint "{name}"'
    detail = f"Key ({columns})=({values}) already exists."
    return Hit(
        table, _lines(w, error, detail), f"UniqueViolation on {name}", f"unique index {name}", share
    )


@dataclass(frozen=True, slots=True)
class Migration:
    """One migration of a batch, healthy or bad."""

    id: str
    author: str
    minutes_ago: int
    """When it was committed (the migrate job applies the batch minutes before the page)."""
    message: str
    sql: str
    """The file, with `{{S}}` where the healthy or the broken form goes."""
    good: str
    bad: str
    mechanism: str
    hits: tuple[Hit, ...]
    cycle: str = ""
    """For circular foreign keys: the chain, as schema_guard names it."""
    category: str = "bad_migration"
    guard: str = ""
    """schema_guard's warning, when not the generic one."""
    running: bool = False
    """Still running when the page came (an index build holding its lock)."""

    @property
    def whatsapp_only(self) -> bool:
        """Whether it touches only whatsapp_sync's tables (so it can live on wa_postgres)."""
        return all(h.table in WHATSAPP_TABLES for h in self.hits)


NOT_NULL_DEFAULT = " NOT NULL DEFAULT ''"
CYCLE = "circular NOT NULL foreign keys"
UNFILLED = "a NOT NULL column without a default that the writers do not fill"
EMPTY_KEY = "a NOT NULL DEFAULT '' foreign key that no writer fills ('' references nothing)"


def set_not_null(table: str, column: str) -> str:
    """The broken form of a backfilled column: made NOT NULL, with no default for new rows."""
    return f"\nALTER TABLE {table} ALTER COLUMN {column} SET NOT NULL;"


def _m(
    id: str, author: str, ago: int, message: str, sql: str, good: str, bad: str, mechanism: str,
    *hits: Hit, cycle: str = "", category: str = "bad_migration", guard: str = "",
    running: bool = False,
) -> Migration:  # fmt: skip
    return Migration(
        id, author, ago, textwrap.dedent(message).strip(), textwrap.dedent(sql).lstrip(), good,
        bad, mechanism, hits, cycle, category, guard, running,
    )  # fmt: skip


def timeout(
    table: str,
    postgres: tuple[str, ...],
    app: str,
    fx: dict[str, dict[str, float]],
    app_service: str = "",
) -> Hit:
    """A table whose statements now run past the statement timeout."""
    return Hit(table, postgres, "QueryCanceled", "statement timeout", 1.0, app, app_service, fx)


BATCHES: dict[str, tuple[Migration, Migration, Migration]] = {
    "ctwa": (
        _m(
            "0005_ctwa_attribution_links",
            "leila@ads-growth",
            2950,
            """
            migrations: click-to-WhatsApp attribution links (ADS-2318)

            A chat opened from a click-to-WhatsApp ad keeps the ad that opened it
            (wa_messages.source_ad_id), a conversion reported from a chat keeps the message it
            came from (conversion_events.wa_message_id), and each ad keeps its latest
            conversion for the advertiser dashboard (ads.last_conversion_id).

            Foreign keys are added NOT VALID so the ALTERs do not scan the big tables; the
            services start writing the columns in their next releases.
            """,
            """
            -- ADS-2318 click-to-WhatsApp attribution: chat -> ad, conversion -> chat, ad -> latest
            -- conversion.
            ALTER TABLE wa_messages ADD COLUMN source_ad_id TEXT{{S}};
            ALTER TABLE wa_messages ADD CONSTRAINT wa_messages_source_ad_id_fkey
                FOREIGN KEY (source_ad_id) REFERENCES ads (ad_id) NOT VALID;

            ALTER TABLE conversion_events ADD COLUMN wa_message_id TEXT{{S}};
            ALTER TABLE conversion_events ADD CONSTRAINT conversion_events_wa_message_id_fkey
                FOREIGN KEY (wa_message_id) REFERENCES wa_messages (message_id) NOT VALID;

            ALTER TABLE ads ADD COLUMN last_conversion_id TEXT{{S}};
            ALTER TABLE ads ADD CONSTRAINT ads_last_conversion_id_fkey
                FOREIGN KEY (last_conversion_id) REFERENCES conversion_events (event_id) NOT VALID;
            """,
            "",
            NOT_NULL_DEFAULT,
            CYCLE,
            foreign_key(
                "CE", "conversion_events_wa_message_id_fkey", "wa_message_id", "wa_messages"
            ),
            foreign_key(
                "ADS", "ads_last_conversion_id_fkey", "last_conversion_id", "conversion_events"
            ),
            foreign_key("WM", "wa_messages_source_ad_id_fkey", "source_ad_id", "ads"),
            cycle="wa_messages.source_ad_id -> ads.last_conversion_id ->"
            " conversion_events.wa_message_id -> wa_messages",
        ),
        _m(
            "0006_capi_business_messaging_keys",
            "kenji@capi-team",
            1420,
            """
            migrations: key business-messaging conversions to the WhatsApp user (WA-1420)

            Conversions API for business messaging: a conversion sent for a chat names the
            WhatsApp user (conversion_events.wa_user_id), a user acquired through an ad keeps
            the click that brought them (wa_users.first_click_id), and a click keeps the first
            conversion attributed to it (ad_clicks.first_conversion_id).

            NOT VALID foreign keys, same as 0005: no scan of existing rows.
            """,
            """
            -- WA-1420 conversions API for business messaging: conversion -> WhatsApp user, user ->
            -- acquiring click, click -> first conversion.
            ALTER TABLE conversion_events ADD COLUMN wa_user_id TEXT{{S}};
            ALTER TABLE conversion_events ADD CONSTRAINT conversion_events_wa_user_id_fkey
                FOREIGN KEY (wa_user_id) REFERENCES wa_users (user_id) NOT VALID;

            ALTER TABLE wa_users ADD COLUMN first_click_id TEXT{{S}};
            ALTER TABLE wa_users ADD CONSTRAINT wa_users_first_click_id_fkey
                FOREIGN KEY (first_click_id) REFERENCES ad_clicks (click_id) NOT VALID;

            ALTER TABLE ad_clicks ADD COLUMN first_conversion_id TEXT{{S}};
            ALTER TABLE ad_clicks ADD CONSTRAINT ad_clicks_first_conversion_id_fkey
                FOREIGN KEY (first_conversion_id) REFERENCES conversion_events (event_id) NOT VALID;
            """,
            "",
            NOT_NULL_DEFAULT,
            CYCLE,
            foreign_key("CE", "conversion_events_wa_user_id_fkey", "wa_user_id", "wa_users"),
            foreign_key("WU", "wa_users_first_click_id_fkey", "first_click_id", "ad_clicks"),
            foreign_key(
                "CLK",
                "ad_clicks_first_conversion_id_fkey",
                "first_conversion_id",
                "conversion_events",
            ),
            cycle="conversion_events.wa_user_id -> wa_users.first_click_id ->"
            " ad_clicks.first_conversion_id -> conversion_events",
        ),
        _m(
            "0007_ads_creative_format",
            "lucas@ranking-team",
            610,
            """
            migrations: ads.creative_format for the format-aware pCTR prior (ADS-2331)

            Image, video and carousel creatives click at very different rates; the ranker
            will read the format once the column is filled. Existing ads are images.
            """,
            """
            -- ADS-2331 creative format (image, video, carousel) for the format-aware pCTR prior.
            ALTER TABLE ads ADD COLUMN creative_format TEXT;
            UPDATE ads SET creative_format = 'image' WHERE creative_format IS NULL;{{S}}
            """,
            "",
            set_not_null("ads", "creative_format"),
            UNFILLED,
            not_null("ADS", "creative_format"),
        ),
    ),
    "conv": (
        _m(
            "0005_conversion_events_action_source",
            "kenji@capi-team",
            4310,
            """
            migrations: conversion_events.action_source (ADS-2340)

            Where a conversion happened (website, app, chat, physical_store), for the
            advertisers' breakdowns. Everything stored so far came from the pixel.
            """,
            """
            -- ADS-2340 where a conversion happened (website, app, chat, physical_store).
            ALTER TABLE conversion_events ADD COLUMN action_source TEXT;
            UPDATE conversion_events SET action_source = 'website' WHERE action_source IS NULL;{{S}}
            """,
            "",
            set_not_null("conversion_events", "action_source"),
            UNFILLED,
            not_null("CE", "action_source"),
        ),
        _m(
            "0006_ad_clicks_ad_id_click_time_idx",
            "dmitri@dba-team",
            2890,
            """
            migrations: index ad_clicks (ad_id, click_time) for the attribution job

            The attribution job reads one ad's clicks by time; today that is a scan of
            ad_clicks_ad_id_idx plus a sort. Built CONCURRENTLY: no write lock.
            """,
            """
            -- The attribution job reads an ad's clicks by time. CONCURRENTLY: writes are not blocked.
            CREATE {{S}}INDEX CONCURRENTLY ad_clicks_ad_id_click_time_idx ON ad_clicks (ad_id, click_time);
            """,
            "",
            "UNIQUE ",
            "a unique index that ordinary writes violate (two clicks on one ad in the same second)",
            unique(
                "CLK",
                "ad_clicks_ad_id_click_time_idx",
                "ad_id, click_time",
                "ad-88213, 1764641472",
                0.7,
            ),
        ),
        _m(
            "0007_wa_messages_status_check",
            "amara@messaging-team",
            720,
            """
            migrations: only WhatsApp's own statuses in wa_messages.status (WA-1466)

            A typo'd status from a hand-written backfill went unnoticed for a week. NOT
            VALID: existing rows are not scanned, new writes are checked.
            """,
            """
            -- WA-1466 only the statuses WhatsApp reports. NOT VALID: new writes are checked.
            ALTER TABLE wa_messages ADD CONSTRAINT wa_messages_status_check
                CHECK (status IN ({{S}}'sent', 'delivered', 'read', 'failed')) NOT VALID;
            """,
            "'received', ",
            "",
            "a check constraint that the service's own writes violate (inbound messages are"
            " stored as 'received')",
            check("WM", "wa_messages_status_check"),
        ),
    ),
    "acct": (
        _m(
            "0005_create_ad_accounts",
            "sofia@ads-infra",
            3960,
            """
            migrations: advertiser accounts (ADS-2352)

            Ads belong to an account (billing currency, spend caps). The campaign sync
            starts sending account_id in ad_ranking v3.9.
            """,
            """
            -- ADS-2352 advertiser accounts: an ad belongs to the account that pays for it.
            CREATE TABLE ad_accounts (
                account_id    TEXT PRIMARY KEY,
                name          TEXT NOT NULL,
                currency      CHAR(3) NOT NULL
            );

            ALTER TABLE ads ADD COLUMN account_id TEXT{{S}};
            ALTER TABLE ads ADD CONSTRAINT ads_account_id_fkey
                FOREIGN KEY (account_id) REFERENCES ad_accounts (account_id) NOT VALID;
            """,
            "",
            NOT_NULL_DEFAULT,
            EMPTY_KEY,
            foreign_key("ADS", "ads_account_id_fkey", "account_id", "ad_accounts"),
        ),
        _m(
            "0006_conversion_events_value_check",
            "kenji@capi-team",
            2480,
            """
            migrations: no negative conversion values (ADS-2356)

            A negative value is always an SDK bug. NOT VALID: new writes are checked.
            """,
            """
            -- ADS-2356 a conversion's value is never negative. NOT VALID: new writes are checked.
            ALTER TABLE conversion_events ADD CONSTRAINT conversion_events_value_micros_check
                CHECK (value_micros {{S}} 0) NOT VALID;
            """,
            ">=",
            ">",
            "a check constraint that ordinary writes violate (Lead and registration events carry"
            " no value)",
            check(
                "CE",
                "conversion_events_value_micros_check",
                0.45,
                "evt-7741388, Lead, 1764641464, clk-55133, 0, USD, 2026-12-02 02:11:08+00",
            ),
        ),
        _m(
            "0007_wa_users_consent_source",
            "amara@messaging-team",
            650,
            """
            migrations: wa_users.consent_source (WA-1471)

            Where a user's marketing opt-in came from (chat, web form, import); users
            synced so far came from the CRM import.
            """,
            """
            -- WA-1471 where a user's marketing opt-in came from (chat, web_form, import).
            ALTER TABLE wa_users ADD COLUMN consent_source TEXT;
            UPDATE wa_users SET consent_source = 'import' WHERE consent_source IS NULL;{{S}}
            """,
            "",
            set_not_null("wa_users", "consent_source"),
            UNFILLED,
            not_null("WU", "consent_source"),
        ),
    ),
    "click": (
        _m(
            "0005_ad_clicks_placement",
            "lucas@ranking-team",
            3310,
            """
            migrations: ad_clicks.placement (ADS-2361)

            Which surface a click came from (feed, stories, search), for placement-aware
            attribution. Clicks so far all came from the feed.
            """,
            """
            -- ADS-2361 the surface a click came from (feed, stories, search).
            ALTER TABLE ad_clicks ADD COLUMN placement TEXT;
            UPDATE ad_clicks SET placement = 'feed' WHERE placement IS NULL;{{S}}
            """,
            "",
            set_not_null("ad_clicks", "placement"),
            UNFILLED,
            not_null("CLK", "placement"),
        ),
        _m(
            "0006_wa_messages_user_timeline_idx",
            "dmitri@dba-team",
            1870,
            """
            migrations: index wa_messages (user_id, updated_at) for the chat timeline

            The agent console loads a user's chat newest first. Built CONCURRENTLY.
            """,
            """
            -- The agent console loads a user's chat newest first. CONCURRENTLY: writes are not blocked.
            CREATE {{S}}INDEX CONCURRENTLY wa_messages_user_id_updated_at_idx ON wa_messages (user_id, updated_at);
            """,
            "",
            "UNIQUE ",
            "a unique index that ordinary writes violate (two messages from one user in the same"
            " second)",
            unique(
                "WM",
                "wa_messages_user_id_updated_at_idx",
                "user_id, updated_at",
                "u-20417, 1764641475",
                0.6,
            ),
        ),
        _m(
            "0007_ads_bid_micros_cap",
            "lucas@ranking-team",
            540,
            """
            migrations: cap bids from the campaign API (ADS-2360)

            A campaign API client sent a bid of 4e15 micros last week. Cap at 1,000 units
            of the account currency. NOT VALID: new writes are checked.
            """,
            """
            -- ADS-2360 cap bids at 1,000 units of the account currency. NOT VALID: new writes are checked.
            ALTER TABLE ads ADD CONSTRAINT ads_bid_micros_cap_check
                CHECK (bid_micros <= {{S}}) NOT VALID;
            """,
            "1000000000",
            "1000000",
            "a check constraint in the wrong unit (a cap of 1,000 units written as 1,000,000"
            " micros, one unit)",
            check("ADS", "ads_bid_micros_cap_check", 0.6),
        ),
    ),
    "wachat": (
        _m(
            "0005_conversion_events_wa_message_link",
            "kenji@capi-team",
            4020,
            """
            migrations: link chat conversions to their message (WA-1433)

            A conversion reported from a WhatsApp chat keeps the message it came from.
            NOT VALID foreign key: no scan of existing rows.
            """,
            """
            -- WA-1433 a conversion reported from a chat keeps the message it came from.
            ALTER TABLE conversion_events ADD COLUMN wa_message_id TEXT{{S}};
            ALTER TABLE conversion_events ADD CONSTRAINT conversion_events_wa_message_id_fkey
                FOREIGN KEY (wa_message_id) REFERENCES wa_messages (message_id) NOT VALID;
            """,
            "",
            NOT_NULL_DEFAULT,
            EMPTY_KEY,
            foreign_key(
                "CE", "conversion_events_wa_message_id_fkey", "wa_message_id", "wa_messages"
            ),
        ),
        _m(
            "0006_wa_users_phone_idx",
            "dmitri@dba-team",
            2210,
            """
            migrations: index wa_users (phone) for the contact lookup

            The inbound webhook resolves a sender by phone. Built CONCURRENTLY.
            """,
            """
            -- The inbound webhook resolves a sender by phone. CONCURRENTLY: writes are not blocked.
            CREATE {{S}}INDEX CONCURRENTLY wa_users_phone_idx ON wa_users (phone);
            """,
            "",
            "UNIQUE ",
            "a unique index that ordinary writes violate (businesses share one phone number"
            " across users)",
            unique("WU", "wa_users_phone_idx", "phone", "+1 415 555 0100", 0.6),
        ),
        _m(
            "0007_ad_clicks_click_time_check",
            "lucas@ranking-team",
            470,
            """
            migrations: ad_clicks.click_time is in seconds (ADS-2366)

            The capi millisecond bug (ADS-2114) had a twin in the click logger; keep
            milliseconds out. NOT VALID: new writes are checked.
            """,
            """
            -- ADS-2366 click_time is epoch seconds (0002): keep milliseconds out. NOT VALID: new writes
            -- are checked.
            ALTER TABLE ad_clicks ADD CONSTRAINT ad_clicks_click_time_seconds_check
                CHECK (click_time {{S}} 10000000000) NOT VALID;
            """,
            "<",
            ">",
            "a check constraint with its comparison reversed (every click in seconds violates it)",
            check("CLK", "ad_clicks_click_time_seconds_check"),
        ),
    ),
    "rank": (
        _m(
            "0005_ads_quality_score",
            "lucas@ranking-team",
            3720,
            """
            migrations: ads.quality_score (ADS-2372)

            The creative quality score moves from the feature store into ads so the
            campaign sync can set it. Existing ads start at 1.0.
            """,
            """
            -- ADS-2372 creative quality, 0..1, set by the campaign sync; existing ads start at 1.0.
            ALTER TABLE ads ADD COLUMN quality_score REAL;
            UPDATE ads SET quality_score = 1.0 WHERE quality_score IS NULL;{{S}}
            """,
            "",
            set_not_null("ads", "quality_score"),
            UNFILLED,
            not_null("ADS", "quality_score"),
        ),
        _m(
            "0006_conversion_events_event_name_check",
            "kenji@capi-team",
            1960,
            """
            migrations: conversion_events.event_name is one of the supported events (ADS-2375)

            The same list as capi_pipeline's ALLOWED_EVENT_NAMES, enforced by the
            database too. NOT VALID: new writes are checked.
            """,
            """
            -- ADS-2375 the events capi_pipeline accepts (config.ALLOWED_EVENT_NAMES). NOT VALID: new writes
            -- are checked.
            ALTER TABLE conversion_events ADD CONSTRAINT conversion_events_event_name_check
                CHECK (event_name IN ('Purchase', {{S}}'CompleteRegistration', 'Subscribe', 'AddToCart')) NOT VALID;
            """,
            "'Lead', ",
            "",
            "a check constraint that leaves out an event the pipeline accepts ('Lead')",
            check(
                "CE",
                "conversion_events_event_name_check",
                0.5,
                "evt-7741391, Lead, 1764641466, clk-55140, 0, USD, 2026-12-02 02:11:08+00",
            ),
        ),
        _m(
            "0007_create_wa_conversations",
            "amara@messaging-team",
            580,
            """
            migrations: WhatsApp conversations (WA-1488)

            Messages group into 24-hour conversations (WhatsApp's billing unit).
            whatsapp_sync v1.23 fills conversation_id.
            """,
            """
            -- WA-1488 messages group into 24-hour conversations, WhatsApp's billing unit.
            CREATE TABLE wa_conversations (
                conversation_id  TEXT PRIMARY KEY,
                user_id          TEXT NOT NULL REFERENCES wa_users (user_id),
                opened_at        BIGINT NOT NULL
            );

            ALTER TABLE wa_messages ADD COLUMN conversation_id TEXT{{S}};
            ALTER TABLE wa_messages ADD CONSTRAINT wa_messages_conversation_id_fkey
                FOREIGN KEY (conversation_id) REFERENCES wa_conversations (conversation_id) NOT VALID;
            """,
            "",
            NOT_NULL_DEFAULT,
            EMPTY_KEY,
            foreign_key(
                "WM", "wa_messages_conversation_id_fkey", "conversation_id", "wa_conversations"
            ),
        ),
    ),
    "loop": (
        _m(
            "0005_ads_first_click_id",
            "leila@ads-growth",
            3150,
            """
            migrations: ads.first_click_id for time-to-first-click (ADS-2380)

            Growth wants time from launch to first click per ad. NOT VALID foreign key.
            """,
            """
            -- ADS-2380 the first click an ad received, for time-to-first-click.
            ALTER TABLE ads ADD COLUMN first_click_id TEXT{{S}};
            ALTER TABLE ads ADD CONSTRAINT ads_first_click_id_fkey
                FOREIGN KEY (first_click_id) REFERENCES ad_clicks (click_id) NOT VALID;
            """,
            "",
            NOT_NULL_DEFAULT,
            CYCLE,
            foreign_key("ADS", "ads_first_click_id_fkey", "first_click_id", "ad_clicks"),
            cycle="ads.first_click_id -> ad_clicks.ad_id -> ads",
        ),
        _m(
            "0006_wa_users_locale_check",
            "amara@messaging-team",
            2050,
            """
            migrations: wa_users.locale is a language_COUNTRY code (WA-1490)

            Templates are looked up by locale; a malformed one falls back to English
            silently. NOT VALID: new writes are checked.
            """,
            """
            -- WA-1490 locale is a WhatsApp language code such as pt_BR. NOT VALID: new writes are checked.
            ALTER TABLE wa_users ADD CONSTRAINT wa_users_locale_check
                CHECK (locale ~ '{{S}}') NOT VALID;
            """,
            "^[a-z]{2}_[A-Z]{2}$",
            "^[a-z]{2}-[A-Z]{2}$",
            "a check constraint in the wrong format (BCP 47 'pt-BR' where WhatsApp sends 'pt_BR')",
            check("WU", "wa_users_locale_check"),
        ),
        _m(
            "0007_conversion_events_click_event_idx",
            "dmitri@dba-team",
            760,
            """
            migrations: index conversion_events (click_id, event_name)

            The attribution job looks up a click's conversions by event. Built
            CONCURRENTLY.
            """,
            """
            -- The attribution job looks up a click's conversions by event. CONCURRENTLY: writes are not
            -- blocked.
            CREATE {{S}}INDEX CONCURRENTLY conversion_events_click_id_event_name_idx
                ON conversion_events (click_id, event_name);
            """,
            "",
            "UNIQUE ",
            "a unique index that ordinary writes violate (repeat purchases after one click)",
            unique(
                "CE",
                "conversion_events_click_id_event_name_idx",
                "click_id, event_name",
                "clk-55120, Purchase",
                0.5,
            ),
        ),
    ),
    "hash": (
        _m(
            "0005_wa_users_email_sha256",
            "amara@messaging-team",
            3580,
            """
            migrations: wa_users.email_sha256 for audience matching (WA-1494)

            Custom audiences match on the SHA-256 of the e-mail, computed once here.
            """,
            """
            -- WA-1494 SHA-256 of the e-mail, for custom-audience matching.
            ALTER TABLE wa_users ADD COLUMN email_sha256 TEXT;
            UPDATE wa_users SET email_sha256 = encode(sha256(lower(email)::bytea), 'hex')
                WHERE email_sha256 IS NULL;{{S}}
            """,
            "",
            set_not_null("wa_users", "email_sha256"),
            UNFILLED,
            not_null("WU", "email_sha256"),
        ),
        _m(
            "0006_ad_clicks_campaign_id",
            "lucas@ranking-team",
            1690,
            """
            migrations: ad_clicks.campaign_id (ADS-2384)

            Campaign-level attribution without a join on ads; backfilled from ads.
            """,
            """
            -- ADS-2384 campaign-level attribution without a join on ads; backfilled from ads.
            ALTER TABLE ad_clicks ADD COLUMN campaign_id TEXT;
            UPDATE ad_clicks SET campaign_id = ads.campaign_id FROM ads
                WHERE ads.ad_id = ad_clicks.ad_id AND ad_clicks.campaign_id IS NULL;{{S}}
            """,
            "",
            set_not_null("ad_clicks", "campaign_id"),
            UNFILLED,
            not_null("CLK", "campaign_id"),
        ),
        _m(
            "0007_wa_messages_body_check",
            "amara@messaging-team",
            500,
            """
            migrations: bound wa_messages.body (WA-1497)

            A client pasted a 40 MB log into a chat. NOT VALID: new writes are checked.
            """,
            """
            -- WA-1497 bound the size of a message body. NOT VALID: new writes are checked.
            ALTER TABLE wa_messages ADD CONSTRAINT wa_messages_body_check
                CHECK ({{S}}) NOT VALID;
            """,
            "length(body) <= 65536",
            "length(body) > 0",
            "a check constraint that ordinary writes violate (media messages have an empty body)",
            check("WM", "wa_messages_body_check", 0.55),
        ),
    ),
    "perf": (
        _m(
            "0005_conversion_events_click_lookup_idx",
            "dmitri@dba-team",
            3420,
            """
            migrations: one index for the attribution lookups on conversion_events (ADS-2390)

            conversion_events_click_id_idx and the lookups by (click, event) become one
            composite index; the old one goes. Both CONCURRENTLY: writes are not blocked.
            """,
            """
            -- ADS-2390 one index for the attribution job's lookups by click and by click and event.
            -- CONCURRENTLY: writes are not blocked.
            CREATE INDEX CONCURRENTLY conversion_events_click_lookup_idx
                ON conversion_events ({{S}});
            DROP INDEX CONCURRENTLY conversion_events_click_id_idx;
            """,
            "click_id, event_name",
            "event_name, click_id",
            "a composite index with the wrong leading column replaces the one the attribution"
            " lookups by click_id used, so they scan the whole table",
            timeout(
                "CE",
                (
                    "LOG:  duration: 4870.112 ms  statement: SELECT event_id, event_name, event_time,"
                    " click_id FROM conversion_events WHERE click_id = ANY($1)",
                    "LOG:  auto_explain: Seq Scan on conversion_events (rows=48211907)"
                    " Filter: (click_id = ANY ($1))",
                    "ERROR:  canceling statement due to statement timeout",
                    "STATEMENT:  SELECT event_id, event_name, event_time, click_id FROM"
                    " conversion_events WHERE click_id = ANY($1)",
                ),
                "attribution job: SELECT from conversion_events by click_id canceled after 5 s by"
                " upstream {db} (statement timeout); attributed conversions falling",
                {
                    "postgres": {"cpu": 0.41, "p99_ms": 380},
                    "ad_ranking": {"error_rate": 0.09, "p99_ms": 240, "business": -760},
                },
                app_service="ad_ranking",
            ),
            category="slow_query",
            guard="schema_guard: conversion_events_click_id_idx was dropped by migration"
            " 0005_conversion_events_click_lookup_idx; the new conversion_events_click_lookup_idx"
            " leads with event_name, so lookups by click_id scan the table",
        ),
        _m(
            "0006_wa_conversations_touch_trigger",
            "amara@messaging-team",
            1760,
            """
            migrations: keep each user's conversation current (WA-1501)

            wa_conversations holds each user's open conversation (backfilled from
            wa_messages); a trigger touches it on every inbound message, so the agent
            console sorts chats without scanning wa_messages.
            """,
            """
            -- WA-1501 each user's open conversation, touched by every inbound message.
            CREATE TABLE wa_conversations (
                conversation_id  TEXT PRIMARY KEY,
                user_id          TEXT NOT NULL REFERENCES wa_users (user_id),
                last_message_at  BIGINT NOT NULL
            );
            INSERT INTO wa_conversations (conversation_id, user_id, last_message_at)
                SELECT 'c-' || user_id, user_id, max(updated_at) FROM wa_messages GROUP BY user_id;
            {{S}}
            CREATE FUNCTION wa_touch_conversation() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE wa_conversations SET last_message_at = NEW.updated_at
                    WHERE user_id = NEW.user_id;
                RETURN NEW;
            END $$;
            CREATE TRIGGER wa_messages_touch_conversation AFTER INSERT ON wa_messages
                FOR EACH ROW EXECUTE FUNCTION wa_touch_conversation();
            """,
            "CREATE INDEX wa_conversations_user_id_idx ON wa_conversations (user_id);",
            "",
            "a trigger on every inbound message that updates a 2M-row table by a column no"
            " index covers",
            timeout(
                "WM",
                (
                    "LOG:  duration: 2315.407 ms  statement: INSERT INTO wa_messages (message_id,"
                    " user_id, body, status, updated_at) VALUES ($1, $2, $3, 'received', $4)",
                    "LOG:  auto_explain: Seq Scan on wa_conversations (rows=2104331)"
                    " Filter: (user_id = $1)",
                    'CONTEXT:  SQL statement "UPDATE wa_conversations SET last_message_at ='
                    ' NEW.updated_at WHERE user_id = NEW.user_id" PL/pgSQL function'
                    " wa_touch_conversation() line 3",
                    "ERROR:  canceling statement due to statement timeout",
                ),
                "POST /v1/webhooks/inbound 500: upstream {db} canceled INSERT INTO wa_messages"
                " after 2 s (statement timeout); WhatsApp will redeliver",
                {"whatsapp_sync": {"error_rate": 0.31, "p99_ms": 1900, "queue_depth": 45}},
            ),
            category="slow_query",
            guard="schema_guard: every INSERT into wa_messages fires wa_messages_touch_conversation,"
            " added by migration 0006_wa_conversations_touch_trigger; its UPDATE of"
            " wa_conversations has no index on user_id",
        ),
        _m(
            "0007_ads_campaign_id_idx",
            "lucas@ranking-team",
            690,
            """
            migrations: index ads (campaign_id) for the campaign dashboard (ADS-2393)

            The dashboard lists a campaign's ads; today that is a scan of ads.
            """,
            """
            -- ADS-2393 the campaign dashboard lists a campaign's ads.
            CREATE INDEX {{S}}ads_campaign_id_idx ON ads (campaign_id);
            """,
            "CONCURRENTLY ",
            "",
            "an index build without CONCURRENTLY that holds a lock on ads while it runs, so every"
            " write to ads waits for it",
            timeout(
                "ADS",
                (
                    'LOG:  process 48812 still waiting for RowExclusiveLock on relation "ads" after'
                    " 1000.214 ms",
                    "DETAIL:  Process holding the lock: 47790 (CREATE INDEX ads_campaign_id_idx ON"
                    " ads (campaign_id)). Wait queue: 48812, 48815, 48820.",
                    "ERROR:  canceling statement due to statement timeout",
                    "STATEMENT:  INSERT INTO ads (ad_id, campaign_id, bid_micros) VALUES ($1, $2,"
                    " $3) ON CONFLICT (ad_id) DO UPDATE SET bid_micros = EXCLUDED.bid_micros",
                ),
                "campaign sync PUT /v1/ads/ad-88213 500: upstream {db} canceled INSERT INTO"
                " ads after 5 s (statement timeout, waiting for a lock); the campaign API will"
                " retry the sync",
                {
                    "postgres": {"queue_depth": 25},
                    "ad_ranking": {"error_rate": 0.26, "p99_ms": 420},
                },
            ),
            category="slow_query",
            guard="schema_guard: migration 0007_ads_campaign_id_idx is building ads_campaign_id_idx"
            " without CONCURRENTLY and holds a SHARE lock on ads; every write to ads waits",
            running=True,
        ),
    ),
}
"""Batch name -> its three migrations, 0005 to 0007."""

SPLIT_BATCHES = frozenset({"conv", "acct", "click", "rank", "loop", "hash", "perf"})
"""Batches whose whatsapp-only migrations can live on wa_postgres: none of their other
migrations references a whatsapp_sync table (a foreign key cannot cross databases)."""


def effects(hits: tuple[Hit, ...], database: str) -> dict[str, dict[str, float]]:
    """Per service, per metric: what the bad migration does at full strength."""
    # The database itself looks healthy (its dashboard row would name the culprit's database):
    # the writes it rejects show in its log and in the writers' errors.
    out: dict[str, dict[str, float]] = {}
    for hit in hits:
        for service, metrics in (hit.effects or EFFECTS[hit.table]).items():
            into = out.setdefault(service, {})
            for metric, value in metrics.items():
                if metric == "error_rate":
                    value *= hit.share
                elif metric == "business" and hit.share < 0.8:
                    value *= hit.share * 0.5  # a partial failure: attribution dips, stays healthy
                into[metric] = round(into.get(metric, 0) + value, 3)
    for metrics in out.values():
        if "error_rate" in metrics:
            metrics["error_rate"] = min(0.6, metrics["error_rate"])
        if "business" in metrics:
            metrics["business"] = max(-900, metrics["business"])
    return out


def app_lines(hits: tuple[Hit, ...], database: str) -> tuple[dict[str, list[str]], list[str]]:
    """Each app's error lines, and ad_ranking's warnings about its starving attribution."""
    errors: dict[str, list[str]] = {app: [] for app in APPS}
    starving: list[str] = []
    for hit in hits:
        w = WRITERS[hit.table]
        if hit.app:
            errors[hit.app_service or w.service].append(hit.app.format(db=database))
            continue
        errors[w.service].append(
            f"{w.call}: upstream {database} rejected INSERT INTO {w.table}: {hit.error};"
            f" {w.consequence}"
        )
        if hit.table == "CE":
            errors["capi_pipeline"].append(
                "capi retry queue growing: batches waiting for postgres writes to succeed"
            )
            starving.append(
                "attribution job: 0 new conversions from upstream capi_pipeline in the last"
                " minute; attributed conversions falling"
                if hit.share > 0.8
                else "attribution job: conversions from upstream capi_pipeline arriving at half"
                " the usual rate"
            )
        if hit.table == "CLK":
            starving.append(
                "attribution job: clicks missing from ad_clicks since the last minute;"
                " attributed conversions falling"
            )
    return errors, starving


def pages(
    hits: tuple[Hit, ...], fx: dict[str, dict[str, float]], errors: dict[str, list[str]]
) -> str:
    """What the pager says, from the services the bad migration hits."""
    tables = {h.table for h in hits}
    out = []
    if errors["capi_pipeline"]:
        out.append("capi_pipeline answering 500 to advertisers' conversion batches")
    if errors["ad_ranking"]:
        out.append("ad_ranking 5xx above 5%")
    if fx.get("ad_ranking", {}).get("business", 0) <= -500:
        out.append("ad_ranking attributed conversions collapsing")
    if tables & WHATSAPP_TABLES:
        failing = "delivery webhooks" if "WM" in tables else "its contact sync"
        out.append(f"whatsapp_sync failing {failing}")
    return "; ".join(out)


def fault_table(batch: str, position: int) -> dict[str, Any]:
    """The `[[variants.fault]]` table for the migration at `position` of `batch` being bad."""
    migrations = BATCHES[batch]
    bad = migrations[position]
    # Whether whatsapp_sync runs on its own database is the batch's shape, not the bad
    # migration's: when only a bad whatsapp-only migration split it, wa_postgres's presence named
    # the culprit's database.
    split = batch in SPLIT_BATCHES
    database = "wa_postgres" if split and bad.whatsapp_only else "postgres"
    owners = {
        f"own{5 + i}": "wa_postgres" if split and m.whatsapp_only else "postgres"
        for i, m in enumerate(migrations)
    }
    # The hurried move: roll back the newest of the other two.
    decoy = migrations[2] if position != 2 else migrations[1]
    fx = effects(bad.hits, database)
    errors, starving = app_lines(bad.hits, database)
    services = [a for a in APPS if errors[a] or (a == "ad_ranking" and starving)]
    first = bad.hits[0]
    if bad.guard:
        guard = bad.guard
    elif bad.cycle:
        guard = (
            f"schema_guard: migration {bad.id} closed a circular chain of NOT NULL foreign keys"
            f" {bad.cycle}; no insert order satisfies it, every INSERT into these tables fails"
        )
    else:
        guard = (
            f"schema_guard: writes to {WRITERS[first.table].table} rejected by {first.constraint},"
            f" added by migration {bad.id}"
        )
    if bad.category == "slow_query":
        what, broken, fail = (
            "makes statements run past the statement timeout on",
            "; ".join(
                f"{WRITERS[h.table].service}'s statements on {WRITERS[h.table].table}"
                for h in bad.hits
            ),
            "are canceled",
        )
    else:
        what, broken, fail = (
            "makes every write it covers fail on",
            "; ".join(
                f"{WRITERS[h.table].service} writes to {WRITERS[h.table].table}" for h in bad.hits
            ),
            "fail",
        )
    summary = (
        f"The migrate job applied {', '.join(m.id for m in migrations)} together minutes before"
        f" the page. {bad.id} ({bad.mechanism}) {what} {database}:"
        f" {broken} {fail}, so {', '.join(services)} page while {database} itself looks healthy."
        f" The other two migrations are innocent. Fix: rollback_migration {bad.id} on {database};"
        f" rolling back {decoy.id} (the newest other one) changes nothing and loses a good schema"
        " change."
    )
    others = [m.id for m in migrations if m is not bad]
    return {
        "key": f"{batch}-{bad.id[:4]}",
        "difficulty": "medium" if position == 2 and not split else "hard",
        "db": database,
        "split": split,
        "wa_deps": [database if split else "postgres"],
        **owners,
        "decoy_db": owners[f"own{decoy.id[3]}"],
        "m5": migrations[0].id,
        "m6": migrations[1].id,
        "m7": migrations[2].id,
        "migrate_log": "; ".join(
            f"applying {m.id} ... "
            + ("still building, 0 of 1 indexes done" if m is bad and m.running else "ok")
            for m in migrations
        ),
        "category": bad.category,
        "batch": {b: b == batch for b in BATCHES},
        "bad": bad.id,
        "position": 5 + position,
        "decoy": decoy.id,
        "innocent": others,
        "innocent_files": [f"migrations/{m}.sql" for m in others],
        "mechanism": bad.mechanism,
        "tables": [WRITERS[h.table].table for h in bad.hits],
        "services": services,
        "page": pages(bad.hits, fx, errors),
        **{
            slot: (m.bad if m is bad else m.good) for slot, m in zip(SLOTS, migrations, strict=True)
        },
        "effects": fx,
        "pg_error": [line for h in bad.hits for line in h.postgres],
        "guard": guard,
        "capi": bool(errors["capi_pipeline"]),
        "capi_lines": errors["capi_pipeline"] or [""],
        "rank": bool(errors["ad_ranking"]),
        "rank_lines": errors["ad_ranking"] or [""],
        "rank_warn": bool(starving),
        "rank_warn_lines": starving or [""],
        "wa": bool(errors["whatsapp_sync"]),
        "wa_lines": errors["whatsapp_sync"] or [""],
        # Health checks only for the services the start shows unhealthy (FAIL_TO_PASS).
        "capi_sick": bool(errors["capi_pipeline"]),
        "rank_sick": bool(errors["ad_ranking"])
        or fx.get("ad_ranking", {}).get("business", 0) <= -500,
        "wa_sick": bool(errors["whatsapp_sync"]),
        "summary": summary,
    }


OWNED = ("history",)
"""The whole history of the family is written here: one commit per migration."""


def files() -> dict[str, str]:
    """One commit per migration, gated by its batch, by path under the family's folder."""
    out = {}
    number = FIRST_COMMIT
    for batch, migrations in BATCHES.items():
        for slot, m in zip(SLOTS, migrations, strict=True):
            commit = f"history/{number:02d}-{batch}-{m.id[5:].replace('_', '-')}"
            number += 1
            out[f"{commit}/commit.toml"] = (
                f'when = "{{{{fault.batch.{batch}}}}}"\n'
                f"author = {json.dumps(m.author)}\n"
                f'message = """{m.message}\n"""\n'
                f"minutes_ago = {m.minutes_ago}\n"
            )
            out[f"{commit}/migrations/{m.id}.sql"] = m.sql.replace("{{S}}", f"{{{{fault.{slot}}}}}")
    return out


def axes() -> str:
    """The main axis."""
    return fault_axis([fault_table(batch, position) for batch in BATCHES for position in range(3)])
