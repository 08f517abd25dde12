"""Grader probes for meta-sre/migration-cascade-v3 (never shown to agents).

Each probe calls the services' code on fixed inputs, or reads the migrations, and returns what
it observed as plain data; it decides nothing. The grader runs the same probes on the reference
solution's world and compares the observations there, so the expected values are written
nowhere in this file.

The incident is fixed operationally (roll back the bad migration on postgres), which the
state checks prove. These PASS_TO_PASS probes read the code and the migrations as the running
platform has them (a rolled-back migration's file is left out): the service tables, the
foreign keys, the innocent migrations applied with the bad one, and the behaviour of each
service (none may have been patched to swallow write errors or otherwise changed).
"""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIGRATIONS = os.path.join(ROOT, "migrations")

CREATE = re.compile(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+) ?\((.*)\)$", re.I)
ADD_COLUMN = re.compile(r"ALTER TABLE (\w+) ADD COLUMN (?:IF NOT EXISTS )?(\w+) (.*)$", re.I)
ADD_CONSTRAINT = re.compile(r"ALTER TABLE (\w+) ADD (CONSTRAINT \w+ .*)$", re.I)
TABLE_FK = re.compile(
    r"(?:CONSTRAINT (\w+) )?FOREIGN KEY ?\((\w+)\) REFERENCES (\w+) ?\((\w+)\)", re.I
)
COLUMN_FK = re.compile(r"REFERENCES (\w+) ?\((\w+)\)", re.I)

INNOCENT_FILES = {{fault.innocent_files}}


def _schema():
    """{table: {"columns": set, "fks": [(column, ref_table, ref_column)]}} after every migration."""
    tables = {}
    for name in sorted(os.listdir(MIGRATIONS)):
        if not name.endswith(".sql"):
            continue
        with open(os.path.join(MIGRATIONS, name), encoding="utf-8") as handle:
            text = re.sub(r"--[^\n]*", "", handle.read())
        for statement in (" ".join(s.split()) for s in text.split(";")):
            if m := CREATE.match(statement):
                spec = tables[m.group(1)] = {"columns": set(), "fks": []}
                for definition in re.split(r", ?(?![^()]*\))", m.group(2)):
                    definition = definition.strip()
                    if fk := TABLE_FK.match(definition):
                        spec["fks"].append(fk.groups()[1:])
                    elif definition.split(" ", 1)[0].upper() not in (
                        "CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK"
                    ):
                        column = definition.split(" ", 1)[0]
                        spec["columns"].add(column)
                        if ref := COLUMN_FK.search(definition):
                            spec["fks"].append((column, ref.group(1), ref.group(2)))
            elif m := ADD_COLUMN.match(statement):
                tables[m.group(1)]["columns"].add(m.group(2))
                if ref := COLUMN_FK.search(m.group(3)):
                    tables[m.group(1)]["fks"].append((m.group(2), ref.group(1), ref.group(2)))
            elif m := ADD_CONSTRAINT.match(statement):
                if fk := TABLE_FK.search(m.group(2)):
                    tables[m.group(1)]["fks"].append(fk.groups()[1:])
    return tables


def service_tables_still_exist():
    tables = _schema()
    wanted = ("conversion_events", "ads", "ad_clicks", "wa_users", "wa_messages")
    wa_messages = tables.get("wa_messages", {"columns": set()})
    return {
        "present": [table for table in wanted if table in tables],
        "wa_messages_has_status": "status" in wa_messages["columns"],
    }


def foreign_keys_still_resolve():
    tables = _schema()
    dangling = []
    for table, spec in tables.items():
        for column, ref_table, ref_column in spec["fks"]:
            if ref_column not in tables.get(ref_table, {"columns": set()})["columns"]:
                dangling.append([table, column, ref_table, ref_column])
    return {"dangling": sorted(dangling)}


def innocent_migrations_are_kept():
    return {
        "files_present": [f for f in INNOCENT_FILES if os.path.exists(os.path.join(ROOT, f))],
    }


def capi_ingest_unchanged():
    from capi_pipeline import ConversionIngestor, InMemoryEventStore

    store = InMemoryEventStore()
    batch = [
        {"event_id": "x1", "event_name": "Purchase", "event_time": 1_717_000_000_500,
         "value": 5, "currency": "usd"},
        {"event_id": "x1", "event_name": "Purchase", "event_time": 1_717_000_000_500},
        {"event_id": "x2", "event_name": "Refund", "event_time": 1_717_000_000},
    ]
    result = ConversionIngestor(store).ingest(batch)
    events = store.all_events()
    return {
        "accepted": result.accepted,
        "duplicates": result.duplicates,
        "rejected": len(result.rejected),
        "first_event_time": events[0].event_time if events else None,
    }


def attribution_window_unchanged():
    from ad_ranking import Click, attribute_conversions
    from capi_pipeline import ConversionEvent

    clicks = [Click("k1", "ad-a", 1_000_000), Click("k2", "ad-b", 1_000_000)]
    conversions = [
        ConversionEvent("e1", "Purchase", 1_000_000 + 86_400, "k1", 0, "USD"),
        ConversionEvent("e2", "Purchase", 1_000_000 + 8 * 86_400, "k1", 0, "USD"),
        ConversionEvent("e3", "Lead", 1_000_000 + 60, "k2", 0, "USD"),
        ConversionEvent("e4", "Lead", 999_000, "k2", 0, "USD"),
    ]
    return dict(attribute_conversions(clicks, conversions))


def ranking_unchanged():
    from ad_ranking import AdStats, InMemoryFeatureStore, handle_rank_request

    store = InMemoryFeatureStore([
        AdStats("ad-a", impressions=10_000, clicks=300, attributed_conversions=30),
        AdStats("ad-b", impressions=10_000, clicks=100, attributed_conversions=5),
    ])
    payload = {"candidates": [
        {"ad_id": "ad-b", "campaign_id": "c-1", "bid_micros": 1_000_000},
        {"ad_id": "ad-a", "campaign_id": "c-2", "bid_micros": 1_000_000},
    ]}
    response = handle_rank_request(payload, store)
    bad = {"candidates": [{"ad_id": "ad-zzz", "campaign_id": "c", "bid_micros": 1}]}
    return {
        "status": response["status"],
        "order": [ad["ad_id"] for ad in response.get("ads") or []],
        "unknown_ad_status": handle_rank_request(bad, store)["status"],
    }


async def whatsapp_sync_unchanged():
    from whatsapp_sync import MessageRepository, SyncApi, repository

    user = {"user_id": "u-9", "display_name": "Loja", "phone": "+351 912 345 678",
            "email": "ana@loja.example", "locale": "pt_PT", "opted_in": False}
    messages = {}

    class Conn:
        async def fetch_one(self, query, *args):
            if query == repository.SELECT_USER:
                return dict(user) if args[0] == "u-9" else None
            return messages.get(args[0])

        async def execute(self, query, *args):
            status = args[1] if query == repository.UPDATE_STATUS else "received"
            messages[args[0]] = {"message_id": args[0], "status": status}
            return 1

    class Pool:
        out = 0

        async def acquire(self):
            Pool.out += 1
            return Conn()

        async def release(self, conn):
            Pool.out -= 1

    api = SyncApi(MessageRepository(Pool()))
    profile = await api.get_profile("u-9")
    inbound = {"message_id": "m1", "from": "u-9", "timestamp": 5}
    inbound_answer = await api.inbound_webhook(inbound)
    status = {"message_id": "m1", "status": "read", "timestamp": 6}
    status_answer = await api.status_webhook(status)
    unknown_answer = await api.status_webhook({**status, "message_id": "nope"})
    return {
        "profile_status": profile["status"],
        "profile_shows_phone": "912" in str(profile),
        "inbound_duplicate": inbound_answer.get("body", {}).get("duplicate"),
        "status_changed": status_answer.get("body", {}).get("changed"),
        "unknown_message_status": unknown_answer["status"],
        "connections_out": Pool.out,
    }
