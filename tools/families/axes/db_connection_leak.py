"""Writes db-connection-leak's main axis (`[[variants.fault]]`): 33 leaks at 19 calls.

Each table is one edit of healthy code: whatsapp_sync's templates, opt-outs, outbox, sender and
attachment reads (history/06 here) and message repository (history/03 of the topology), or
capi_pipeline's postgres event store (history/07). `find` is the healthy block of a pooled
call, `bug` the broken form the bad commit (history/09) puts in its place. What leaks is a
pooled connection, a send slot (a semaphore) or a blob handle (a file descriptor). The
ground-truth lines, the commit message and the evidence (the endpoint the pool's leak detector names,
the query postgres shows for the stuck connections, lock timeouts for the leaks on a failing
query) follow from the call and the mechanism. The hidden checks are computed by the engine: a
table's FAIL_TO_PASS are the probes of hidden/probes.py whose observation at the start differs
from the reference's, all the others its PASS_TO_PASS.

A call with two structures starts the second one's edit at the `def`, under a note of PAD
lines: otherwise one structure's exact fix (the same start line, one length or the other)
would repair the other's lines too, and a memorised seed would solve its sibling's seeds.

Run it after changing a call, a mechanism or a probe, then `metasre validate db-connection-leak`:

    python -m tools.families regenerate db_connection_leak
"""

# ruff: noqa: E501  # the broken code stays line for line as the commit writes it

from __future__ import annotations

import ast
from typing import Any

from ..authoring import SCENARIOS, engine_checked_axis, probe_names

HERE = SCENARIOS / "db_connection_leak"
TOPOLOGY = HERE.parent / "_topologies" / "ads_platform" / "history"
FAMILY = "meta-sre/db-connection-leak-v2"
SOURCES = {
    "whatsapp_sync/repository.py": TOPOLOGY / "03-whatsapp-release-connections",
    "whatsapp_sync/templates.py": HERE / "history" / "06-outbound-messaging",
    "whatsapp_sync/optouts.py": HERE / "history" / "06-outbound-messaging",
    "whatsapp_sync/outbox.py": HERE / "history" / "06-outbound-messaging",
    "whatsapp_sync/media.py": HERE / "history" / "06-outbound-messaging",
    "capi_pipeline/pg_store.py": HERE / "history" / "07-capi-postgres-store",
}

HAND = "        # Hot path: acquire and release by hand; pooled()'s async generator costs ~35 us a\n        # call in the py-spy profile of the evening peak ({ticket})."
HAND3 = HAND + " One release on the way\n        # out, after the last query."
SLOT = "        # Take the send slot by hand: the async with hid which slot a stuck send held when\n        # we chased the Cloud API 429s ({ticket})."
R = "whatsapp_sync/repository.py"
T = "whatsapp_sync/templates.py"
OPT = "whatsapp_sync/optouts.py"
X = "whatsapp_sync/outbox.py"
PG = "capi_pipeline/pg_store.py"
MEDIA = "whatsapp_sync/media.py"
FD = (
    "        # Open the blob by hand: closing() hid which read held a handle when the media\n"
    "        # volume ran out of descriptors last week ({ticket})."
)

FAULTS: list[dict[str, Any]] = []
"""One dict per structure: key, file, fn (Class.method), mech, bug (the broken block), endpoint,
path (the leaking path, for the log hints), query (the constant of the query the stuck
connection ran last)."""


def add(key: str, file: str, fn: str, mech: str, bug: str, **kw: Any) -> None:
    """Add a leak: `fn` of `file` rewritten as `bug`, by mechanism `mech`."""
    FAULTS.append(dict(key=key, file=file, fn=fn, mech=mech, bug=bug.strip("\n"), **kw))


# ---------------- repository.py
add(
    "get-user-early-return",
    R,
    "MessageRepository.get_user",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_USER, user_id)
        if row is None:
            return None
        await self._pool.release(conn)
        return User(**row)""",
    endpoint="GET /v1/users",
    path="unknown user",
    query="SELECT_USER",
)
add(
    "get-user-no-finally",
    R,
    "MessageRepository.get_user",
    "nofinally",
    HAND3
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_USER, user_id)
        await self._pool.release(conn)
        return None if row is None else User(**row)""",
    endpoint="GET /v1/users",
    query="SELECT_USER",
)
add(
    "save-inbound-early-return",
    R,
    "MessageRepository.save_inbound",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        if await conn.fetch_one(SELECT_MESSAGE, message_id) is not None:
            return False
        await conn.execute(INSERT_MESSAGE, message_id, user_id, body, at)
        await self._pool.release(conn)
        return True""",
    endpoint="POST /v1/webhooks/inbound",
    path="redelivery",
    query="SELECT_MESSAGE",
)
add(
    "save-inbound-no-finally",
    R,
    "MessageRepository.save_inbound",
    "nofinally",
    HAND3
    + """
        conn = await self._pool.acquire()
        duplicate = await conn.fetch_one(SELECT_MESSAGE, message_id) is not None
        if not duplicate:
            await conn.execute(INSERT_MESSAGE, message_id, user_id, body, at)
        await self._pool.release(conn)
        return not duplicate""",
    endpoint="POST /v1/webhooks/inbound",
    query="SELECT_MESSAGE",
)
add(
    "update-status-early-return",
    R,
    "MessageRepository.update_status",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_MESSAGE, message_id)
        if row is None:
            await self._pool.release(conn)
            raise UnknownMessage(message_id)
        if row["status"] == status:
            return False
        await conn.execute(UPDATE_STATUS, message_id, status, at)
        await self._pool.release(conn)
        return True""",
    endpoint="POST /v1/webhooks/status",
    path="repeated status",
    query="SELECT_MESSAGE",
)
add(
    "update-status-raise",
    R,
    "MessageRepository.update_status",
    "raise",
    HAND
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_MESSAGE, message_id)
        if row is None:
            raise UnknownMessage(message_id)
        changed = row["status"] != status
        if changed:
            await conn.execute(UPDATE_STATUS, message_id, status, at)
        await self._pool.release(conn)
        return changed""",
    endpoint="POST /v1/webhooks/status",
    path="unknown message",
    query="SELECT_MESSAGE",
)

# ---------------- templates.py
add(
    "get-template-early-return",
    T,
    "TemplateRepository.get_template",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_TEMPLATE, name, locale)
        if row is None or row["status"] != "approved":
            row = await conn.fetch_one(SELECT_TEMPLATE, name, FALLBACK_LOCALE)
        if row is None or row["status"] != "approved":
            return None
        await self._pool.release(conn)
        return {"name": row["name"], "locale": row["locale"], "body": row["body"]}""",
    endpoint="POST /v1/messages",
    path="template with no approved version",
    query="SELECT_TEMPLATE",
)
add(
    "get-template-no-finally",
    T,
    "TemplateRepository.get_template",
    "nofinally",
    HAND3
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_TEMPLATE, name, locale)
        if row is None or row["status"] != "approved":
            row = await conn.fetch_one(SELECT_TEMPLATE, name, FALLBACK_LOCALE)
        await self._pool.release(conn)
        if row is None or row["status"] != "approved":
            return None
        return {"name": row["name"], "locale": row["locale"], "body": row["body"]}""",
    endpoint="POST /v1/messages",
    query="SELECT_TEMPLATE",
)
add(
    "submit-template-early-return",
    T,
    "TemplateRepository.submit_template",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        if await conn.fetch_one(SELECT_TEMPLATE, name, locale) is not None:
            return False
        await conn.execute(INSERT_TEMPLATE, name, locale, body, at)
        await self._pool.release(conn)
        return True""",
    endpoint="POST /v1/templates",
    path="resubmitted template",
    query="SELECT_TEMPLATE",
)
add(
    "approve-template-raise",
    T,
    "TemplateRepository.approve_template",
    "raise",
    HAND
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_TEMPLATE, name, locale)
        if row is None:
            raise UnknownTemplate(f"template {name!r} has no {locale} version")
        changed = row["status"] != "approved"
        if changed:
            await conn.execute(APPROVE_TEMPLATE, name, locale, at)
        await self._pool.release(conn)
        return changed""",
    endpoint="POST /v1/templates/approve",
    path="unknown template",
    query="SELECT_TEMPLATE",
)
add(
    "approve-template-early-return",
    T,
    "TemplateRepository.approve_template",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_TEMPLATE, name, locale)
        if row is None:
            await self._pool.release(conn)
            raise UnknownTemplate(f"template {name!r} has no {locale} version")
        if row["status"] == "approved":
            return False
        await conn.execute(APPROVE_TEMPLATE, name, locale, at)
        await self._pool.release(conn)
        return True""",
    endpoint="POST /v1/templates/approve",
    path="template approved twice",
    query="SELECT_TEMPLATE",
)

# ---------------- optouts.py
add(
    "record-opt-out-early-return",
    OPT,
    "OptOutRepository.record_opt_out",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        if await conn.fetch_one(SELECT_OPT_OUT, user_id) is not None:
            return False
        await conn.execute(INSERT_OPT_OUT, user_id, at, reason)
        await self._pool.release(conn)
        return True""",
    endpoint="POST /v1/webhooks/optout",
    path="repeated STOP",
    query="SELECT_OPT_OUT",
)
add(
    "record-opt-out-swallowed",
    OPT,
    "OptOutRepository.record_opt_out",
    "swallow",
    """
        conn = await self._pool.acquire()
        try:
            if await conn.fetch_one(SELECT_OPT_OUT, user_id) is not None:
                await self._pool.release(conn)
                return False
            await conn.execute(INSERT_OPT_OUT, user_id, at, reason)
        except Exception:
            # A slow wa_opt_outs write must not 500 the webhook: WhatsApp redelivers the STOP
            # and the next attempt records it ({ticket}).
            return False
        await self._pool.release(conn)
        return True""",
    endpoint="POST /v1/webhooks/optout",
    query="INSERT_OPT_OUT",
)
add(
    "may-message-swallowed",
    OPT,
    "OptOutRepository.may_message",
    "swallow",
    """
        conn = await self._pool.acquire()
        try:
            row = await conn.fetch_one(SELECT_OPT_OUT, user_id)
        except Exception:
            # A slow wa_opt_outs read must not hold up the send path; the sender checks the
            # opt-out again before it posts ({ticket}).
            return True
        await self._pool.release(conn)
        return row is None""",
    endpoint="POST /v1/messages",
    query="SELECT_OPT_OUT",
)
add(
    "may-message-no-finally",
    OPT,
    "OptOutRepository.may_message",
    "nofinally",
    HAND3
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_OPT_OUT, user_id)
        await self._pool.release(conn)
        return row is None""",
    endpoint="POST /v1/messages",
    query="SELECT_OPT_OUT",
)
add(
    "opt-back-in-early-return",
    OPT,
    "OptOutRepository.opt_back_in",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        if await conn.fetch_one(SELECT_OPT_OUT, user_id) is None:
            return False
        await conn.execute(DELETE_OPT_OUT, user_id)
        await self._pool.release(conn)
        return True""",
    endpoint="POST /v1/users/opt-in",
    path="user who never opted out",
    query="SELECT_OPT_OUT",
)

# ---------------- outbox.py
add(
    "enqueue-early-return",
    X,
    "OutboxRepository.enqueue",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        if await conn.fetch_one(SELECT_OUTBOX, message_id) is not None:
            return False
        await conn.execute(INSERT_OUTBOX, message_id, user_id, template, at)
        await self._pool.release(conn)
        return True""",
    endpoint="POST /v1/messages",
    path="client retry",
    query="SELECT_OUTBOX",
)
add(
    "enqueue-no-finally",
    X,
    "OutboxRepository.enqueue",
    "nofinally",
    HAND3
    + """
        conn = await self._pool.acquire()
        queued = await conn.fetch_one(SELECT_OUTBOX, message_id) is not None
        if not queued:
            await conn.execute(INSERT_OUTBOX, message_id, user_id, template, at)
        await self._pool.release(conn)
        return not queued""",
    endpoint="POST /v1/messages",
    query="SELECT_OUTBOX",
)
add(
    "mark-sent-raise",
    X,
    "OutboxRepository.mark_sent",
    "raise",
    HAND
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_OUTBOX, message_id)
        if row is None:
            raise UnknownMessage(message_id)
        changed = row["state"] != "sent"
        if changed:
            await conn.execute(MARK_SENT, message_id, at)
        await self._pool.release(conn)
        return changed""",
    endpoint="the outbox sender",
    path="message no longer queued",
    query="SELECT_OUTBOX",
)
add(
    "mark-sent-early-return",
    X,
    "OutboxRepository.mark_sent",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_OUTBOX, message_id)
        if row is None:
            await self._pool.release(conn)
            raise UnknownMessage(message_id)
        if row["state"] == "sent":
            return False
        await conn.execute(MARK_SENT, message_id, at)
        await self._pool.release(conn)
        return True""",
    endpoint="the outbox sender",
    path="message already sent",
    query="SELECT_OUTBOX",
)
add(
    "record-failure-early-return",
    X,
    "OutboxRepository.record_failure",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_OUTBOX, message_id)
        if row is None:
            await self._pool.release(conn)
            raise UnknownMessage(message_id)
        if row["state"] != "queued":
            return str(row["state"])
        attempts = int(row["attempts"]) + 1
        state = "dead" if attempts >= config.MAX_SEND_ATTEMPTS else "queued"
        await conn.execute(RECORD_FAILURE, message_id, attempts, state)
        await self._pool.release(conn)
        return state""",
    endpoint="the outbox sender",
    path="message already sent or dead",
    query="SELECT_OUTBOX",
)
add(
    "record-failure-raise",
    X,
    "OutboxRepository.record_failure",
    "raise",
    HAND
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(SELECT_OUTBOX, message_id)
        if row is None:
            raise UnknownMessage(message_id)
        state = str(row["state"])
        if state == "queued":
            attempts = int(row["attempts"]) + 1
            state = "dead" if attempts >= config.MAX_SEND_ATTEMPTS else "queued"
            await conn.execute(RECORD_FAILURE, message_id, attempts, state)
        await self._pool.release(conn)
        return state""",
    endpoint="the outbox sender",
    path="message no longer queued",
    query="SELECT_OUTBOX",
)

# ---------------- the sender's send slots
add(
    "send-slot-refused",
    X,
    "Sender.send",
    "slot",
    SLOT
    + '''
        await self._slots.acquire()
        self._free -= 1
        try:
            await self._transport.post(user_id, template)
        except TransportError:
            return await self._outbox.record_failure(message_id)
        await self._outbox.mark_sent(message_id, at)
        self._free += 1
        self._slots.release()
        return "sent"''',
    endpoint="the outbox sender",
    path="send the Cloud API refused",
)
add(
    "send-slot-no-finally",
    X,
    "Sender.send",
    "slot",
    SLOT
    + """
        await self._slots.acquire()
        self._free -= 1
        try:
            await self._transport.post(user_id, template)
        except TransportError:
            state = await self._outbox.record_failure(message_id)
        else:
            await self._outbox.mark_sent(message_id, at)
            state = "sent"
        self._free += 1
        self._slots.release()
        return state""",
    endpoint="the outbox sender",
    path="send whose outbox row vanished",
)

# ---------------- whatsapp_sync's attachment reads: a blob handle (a file descriptor)
add(
    "media-fetch-raise",
    MEDIA,
    "MediaReader.fetch",
    "fd_raise",
    FD
    + """
        handle = self._store.open(media_id)
        data = handle.read(config.MAX_MEDIA_BYTES + 1)
        if len(data) > config.MAX_MEDIA_BYTES:
            raise MediaTooLarge(f"attachment {media_id} is over {config.MAX_MEDIA_BYTES} bytes")
        handle.close()
        return data""",
    endpoint="GET /v1/media",
    path="attachment over the size limit",
)
add(
    "media-fetch-no-finally",
    MEDIA,
    "MediaReader.fetch",
    "fd_nofinally",
    FD
    + """
        handle = self._store.open(media_id)
        data = handle.read(config.MAX_MEDIA_BYTES + 1)
        handle.close()
        if len(data) > config.MAX_MEDIA_BYTES:
            raise MediaTooLarge(f"attachment {media_id} is over {config.MAX_MEDIA_BYTES} bytes")
        return data""",
    endpoint="GET /v1/media",
    path="read that fails",
)
add(
    "media-sniff-early-return",
    MEDIA,
    "MediaReader.sniff",
    "fd_early",
    FD
    + """
        handle = self._store.open(media_id)
        head = handle.read(8)
        for signature, kind in SIGNATURES:
            if head.startswith(signature):
                return kind
        handle.close()
        return "application/octet-stream\"""",
    endpoint="POST /v1/webhooks/inbound",
    path="recognised attachment type",
)

# ---------------- capi_pipeline's postgres event store (history/07)
add(
    "capi-insert-event-early-return",
    PG,
    "PostgresEventStore.insert_event",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        if await conn.fetch_one(SELECT_EVENT, event.event_id) is not None:
            return False
        await conn.execute(INSERT_EVENT_SQL, *_row(event))
        await self._pool.release(conn)
        return True""",
    endpoint="POST /v1/events",
    path="advertiser retry",
    query="SELECT_EVENT",
    service="capi_pipeline",
)
add(
    "capi-insert-event-no-finally",
    PG,
    "PostgresEventStore.insert_event",
    "nofinally",
    HAND3
    + """
        conn = await self._pool.acquire()
        stored = await conn.fetch_one(SELECT_EVENT, event.event_id) is not None
        if not stored:
            await conn.execute(INSERT_EVENT_SQL, *_row(event))
        await self._pool.release(conn)
        return not stored""",
    endpoint="POST /v1/events",
    query="SELECT_EVENT",
    service="capi_pipeline",
)
add(
    "capi-insert-batch-early-return",
    PG,
    "PostgresEventStore.insert_batch",
    "early",
    HAND
    + """
        conn = await self._pool.acquire()
        if not events:
            return 0
        inserted = 0
        for event in events:
            inserted += await conn.execute(INSERT_EVENT_SQL, *_row(event))
        await self._pool.release(conn)
        return inserted""",
    endpoint="the ingest worker",
    path="empty batch",
    query="INSERT_EVENT_SQL",
    service="capi_pipeline",
)
add(
    "capi-insert-batch-swallowed",
    PG,
    "PostgresEventStore.insert_batch",
    "swallow",
    """
        conn = await self._pool.acquire()
        inserted = 0
        try:
            for event in events:
                inserted += await conn.execute(INSERT_EVENT_SQL, *_row(event))
        except Exception:
            # Keep what was stored: the advertiser retries the batch and the rest is
            # deduplicated by ON CONFLICT ({ticket}).
            return inserted
        await self._pool.release(conn)
        return inserted""",
    endpoint="the ingest worker",
    query="INSERT_EVENT_SQL",
    service="capi_pipeline",
)
add(
    "capi-count-for-click-no-finally",
    PG,
    "PostgresEventStore.count_for_click",
    "nofinally",
    HAND3
    + """
        conn = await self._pool.acquire()
        row = await conn.fetch_one(COUNT_FOR_CLICK, click_id)
        await self._pool.release(conn)
        return int(row["n"]) if row is not None else 0""",
    endpoint="the attribution job",
    query="COUNT_FOR_CLICK",
    service="capi_pipeline",
)
add(
    "capi-purge-raise",
    PG,
    "PostgresEventStore.purge_before",
    "raise",
    HAND
    + """
        conn = await self._pool.acquire()
        if cutoff > now - config.RETENTION_DAYS * 86400:
            raise RetentionError(
                f"purge cutoff {cutoff} is inside the {config.RETENTION_DAYS}-day retention"
            )
        deleted = await conn.execute(PURGE_BEFORE, cutoff)
        await self._pool.release(conn)
        return deleted""",
    endpoint="the nightly purge",
    path="cutoff inside the retention",
    query="PURGE_BEFORE",
    service="capi_pipeline",
)

# ---------------------------------------------------------------- what follows from a structure

PAD = {
    "get-user-no-finally": 3,
    "save-inbound-no-finally": 3,
    "update-status-raise": 3,
    "get-template-no-finally": 3,
    "approve-template-early-return": 3,
    "record-opt-out-swallowed": 3,
    "may-message-no-finally": 4,
    "enqueue-no-finally": 3,
    "mark-sent-early-return": 3,
    "capi-insert-event-no-finally": 3,
    "media-fetch-no-finally": 3,
    "capi-insert-batch-swallowed": 3,
    "record-failure-raise": 4,
    "send-slot-no-finally": 3,
}
"""The second structure of a call: how many note lines go above its `def` (see the module
docstring); tests/simulator/test_db_connection_leak_family.py proves neither fix repairs the
other."""
_HOT = [
    "Hot path ({ticket}): this call acquires and releases its pooled connection by",
    "hand. pooled()'s async generator machinery cost ~35 us a call in the py-spy",
    "profile of the evening peak, and every request of this endpoint runs it.",
    "Keep it that way unless a new profile says otherwise.",
]
_FD = [
    "Opens its blob by hand ({ticket}): closing() hid which read held a handle when the",
    "media volume ran out of descriptors last week.",
    "Owner: messaging-team.",
]
NOTE = {
    "fd_raise": _FD,
    "fd_nofinally": _FD,
    "fd_early": _FD,
    "early": _HOT,
    "nofinally": _HOT,
    "raise": _HOT,
    "swallow": [
        "A failed query answers a safe default instead of a 500 ({ticket}): during the",
        "{table} vacuum every statement cancelled here turned into a {client} retry",
        "storm. The default is logged; {sender} sends it again, and the next try records it.",
    ],
    "slot": [
        "Takes its send slot by hand ({ticket}): the async with hid which send held a",
        "slot while we chased the Cloud API 429s; free_slots sits next to it now.",
        "Owner: messaging-team.",
    ],
}
DB_MECHANISMS = ("early", "nofinally", "raise", "swallow")
"""The mechanisms that leak a pooled database connection (not a send slot or a blob handle)."""
WHO = {
    "whatsapp_sync": {
        "service": "whatsapp_sync",
        "table": "wa_opt_outs",
        "client": "webhook",
        "sender": "WhatsApp",
    },
    "capi_pipeline": {
        "service": "capi_pipeline",
        "table": "conversion_events",
        "client": "batch",
        "sender": "the advertiser",
    },
}
"""Who the texts of a structure name, by service."""
PAGER = {
    "whatsapp_sync": "WhatsApp delivery receipts, inbound business messages and outbound"
    " template sends are backing up; the Cloud API is retrying webhooks.",
    "capi_pipeline": "Advertisers' conversion batches fail with 503 and are retried; the"
    " attribution job is falling behind.",
}
"""The pager's second sentence, by service."""
_FD_MESSAGE = """{service}: open attachment blobs by hand in {fn} ({ticket})

Last week the media volume ran out of descriptors and we could not tell
which read held them: closing() hid it. {fn} now opens and closes its
handle itself, next to the read. Unit suite green."""
MESSAGE = {
    "fd_raise": _FD_MESSAGE,
    "fd_nofinally": _FD_MESSAGE,
    "fd_early": _FD_MESSAGE,
    "early": """{service}: acquire/release by hand in {fn} ({ticket})

{endpoint} is on the evening peak's hot path and the py-spy profile shows
~35 us per call in pooled()'s async generator machinery. {fn}
now acquires and releases its connection itself; the other queries keep
pooled(). Unit suite green.""",
    "nofinally": """{service}: acquire/release by hand in {fn} ({ticket})

{endpoint} is on the evening peak's hot path and the py-spy profile shows
~35 us per call in pooled()'s async generator machinery. {fn}
now acquires and releases its connection itself, with a single release on
the way out; the other queries keep pooled(). Unit suite green.""",
    "raise": """{service}: acquire/release by hand in {fn} ({ticket})

{endpoint} is on the evening peak's hot path and the py-spy profile shows
~35 us per call in pooled()'s async generator machinery. {fn}
now acquires and releases its connection itself and computes the change
once instead of returning from two places. Unit suite green.""",
    "swallow": """{service}: keep {endpoint} up when {table} is slow ({ticket})

During last Tuesday's vacuum of {table}, cancelled statements in {fn}
turned into 500s and {sender} retried every {client}. A failed query is
now logged and answered with a safe default instead of raising. Unit
suite green.""",
    "slot": """whatsapp_sync: sender takes its send slot by hand ({ticket})

While chasing the Cloud API 429s we could not tell which send held a slot;
Sender.send now acquires and releases the semaphore itself so the slot
accounting (free_slots) sits next to it. Unit suite green.""",
}
DIFFICULTY = {
    "fd_raise": "medium",
    "fd_nofinally": "hard",
    "fd_early": "medium",
    "early": "medium",
    "raise": "medium",
    "nofinally": "hard",
    "swallow": "hard",
    "slot": "hard",
}


def _function(src: str, fn: str) -> tuple[int, int, int]:
    """(def line, first line of the body after its docstring, last line) of Class.method."""
    cls, name = fn.split(".")
    for node in ast.parse(src).body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for m in node.body:
                if isinstance(m, ast.AsyncFunctionDef | ast.FunctionDef) and m.name == name:
                    body = m.body
                    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                        body = body[1:]
                    assert m.end_lineno is not None
                    return m.lineno, body[0].lineno, m.end_lineno
    raise KeyError(fn)


def _constants(sources: dict[str, str]) -> dict[str, str]:
    found = {}
    for src in sources.values():
        for node in ast.parse(src).body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                value = node.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found[node.targets[0].id] = value.value
    return found


def tables(checks: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The main axis; `checks` maps a key to its FAIL_TO_PASS probe names (computed below)."""
    sources = {f: (d / f).read_text() for f, d in SOURCES.items()}
    store = TOPOLOGY / "01-initial-import" / "capi_pipeline" / "store.py"  # INSERT_EVENT_SQL
    queries = _constants({**sources, "capi_pipeline/store.py": store.read_text()})
    probes = probe_names(HERE / "hidden" / "probes.py")
    out = []
    for i, f in enumerate(FAULTS):
        src = sources[f["file"]]
        lines = src.split("\n")
        define, start, end = _function(src, f["fn"])
        ticket = f"MSG-{1401 + i * 7}"
        bug = f["bug"].replace("{ticket}", ticket)
        service = f.get("service", "whatsapp_sync")
        context = {"fn": f["fn"], "ticket": ticket, "endpoint": f["endpoint"], **WHO[service]}
        pad = PAD.get(f["key"], 0)
        if pad:
            note = ["    # " + x.format(**context) for x in NOTE[f["mech"]][:pad]]
            assert len(note) == pad, f["key"]
            bug = "\n".join(note + lines[define - 1 : start - 1]) + "\n" + bug
            start = define
        find = "\n".join(lines[start - 1 : end])
        assert src.count(find) == 1, f["key"]
        query = queries.get(f.get("query", ""), "")
        hints, pg = [], []
        if f["mech"] in ("nofinally", "swallow") and query:
            pg.append(f"canceling statement due to lock timeout; statement: {query}")
        if f["mech"] in ("raise", "fd_raise"):
            hints.append(
                f"{f['endpoint']}: {f['path']} answered {130 + 7 * i} times in the last minute"
            )
        if f["mech"] in ("early", "fd_early"):
            unit = "calls" if f["endpoint"].startswith("the ") else "requests"
            hints.append(f"{f['endpoint']}: {f['path']} {unit} up 4x since the evening peak began")
        failing = checks.get(f["key"], [])
        out.append(
            {
                "key": f["key"],
                "file": f["file"],
                "function": f["fn"],
                "mechanism": f["mech"],
                "ticket": ticket,
                "start": start,
                "end": start + bug.count("\n"),
                "find": find,
                "bug": bug,
                "message": MESSAGE[f["mech"]].format(**context),
                "endpoint": f["endpoint"],
                "query": query,
                "service": service,
                "pager": PAGER[service],
                "db": f["mech"] in DB_MECHANISMS,
                "wa_db": f["mech"] in DB_MECHANISMS and service == "whatsapp_sync",
                "fd": f["mech"].startswith("fd_"),
                "slot": f["mech"] == "slot",
                "wa": service == "whatsapp_sync",
                "capi": service == "capi_pipeline",
                "hint_lines": hints,
                "pg_lines": pg,
                "difficulty": DIFFICULTY[f["mech"]],
                "fail_to_pass": [f"hidden/probes.py::{p}" for p in failing],
                "pass_to_pass": [f"hidden/probes.py::{p}" for p in probes if p not in failing],
            }
        )
    return out


def axes() -> str:
    """The main axis, with the hidden checks the engine computes for its tables."""
    return engine_checked_axis(HERE.name, [f["key"] for f in FAULTS], tables, "leak")
