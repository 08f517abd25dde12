"""Writes pii-exposure's main axis (`[[variants.fault]]`): 24 exposures in two services.

Each table is one edit of the healthy code in history/06 (whatsapp_sync's profile API, masks,
inbox views and audit trail; capi_pipeline's match keys): `find` the healthy lines, `bug` what
the bad commit (history/08) puts there. The commit message, the DLP sidecar's and scanner's
lines and the root service follow from the edit. The hidden checks are computed by the
engine: a table's FAIL_TO_PASS are the probes of hidden/probes.py whose observation at the start
differs from the reference's, all the others its PASS_TO_PASS.

Run it after changing an exposure or a probe, then `metasre validate pii-exposure`:

    python -m tools.families regenerate pii_exposure
"""

# ruff: noqa: E501  # the edited code stays line for line as the commit writes it

from __future__ import annotations

from typing import Any

from ..authoring import SCENARIOS, engine_checked_axis, probe_names

HERE = SCENARIOS / "pii_exposure"
SOURCES = HERE / "history" / "06-inbox-and-match-keys"

FAULTS: list[dict[str, Any]] = []
"""One dict per structure: key, service, file, find (healthy lines), bug, msg (the commit
message), dlp (the root service's sidecar line), scan (the scanner's finding), difficulty."""


def add(
    key: str,
    service: str,
    file: str,
    find: str,
    bug: str,
    msg: str,
    dlp: str,
    scan: str,
    difficulty: str = "medium",
) -> None:
    """Add an exposure: `find` in `file` of `service` becomes `bug` in the bad commit."""
    FAULTS.append(
        dict(
            key=key,
            service=service,
            file=file,
            find=find,
            bug=bug,
            msg=msg,
            dlp=dlp,
            scan=scan,
            difficulty=difficulty,
        )
    )


API = "whatsapp_sync/api.py"
MASK = "whatsapp_sync/masking.py"
CON = "whatsapp_sync/contacts.py"
AUD = "whatsapp_sync/audit.py"
MK = "capi_pipeline/match_keys.py"
W, C = "whatsapp_sync", "capi_pipeline"

PROFILE = "GET /v1/users/{user} 200 to a caller with scopes {scopes} carried {what} (values redacted here)"

# ----------------------------------------------------------------- the profile API
add(
    "profile-phone-unmasked",
    W,
    API,
    '        "phone": user.phone if reveal_pii else mask_phone(user.phone),',
    '        "phone": user.phone,',
    "whatsapp_sync: profiles show the whole phone number ({ticket})\n\nBusinesses asked to call users back from the profile page; the masked\nnumber made them open a support ticket each time.",
    PROFILE.format(
        user="{user}", scopes="[messages:read]", what="an unmasked phone number in body.phone"
    ),
    "GET /v1/users/{user_id} responses expose unmasked phone numbers to callers without support:read_pii",
    "easy",
)
add(
    "profile-email-unmasked",
    W,
    API,
    '        "email": user.email if reveal_pii else mask_email(user.email),',
    '        "email": user.email,',
    "whatsapp_sync: profiles show the whole e-mail address ({ticket})\n\nBusinesses asked to e-mail users invoices from the profile page; the masked\naddress made them open a support ticket each time.",
    PROFILE.format(
        user="{user}", scopes="[messages:read]", what="a raw e-mail address in body.email"
    ),
    "GET /v1/users/{user_id} responses expose raw e-mail addresses to callers without support:read_pii",
    "easy",
)
add(
    "profile-click-to-chat-link",
    W,
    API,
    '        "email": user.email if reveal_pii else mask_email(user.email),',
    '        "email": user.email if reveal_pii else mask_email(user.email),\n        "wa_link": "https://wa.me/" + "".join(ch for ch in user.phone if ch.isdigit()),',
    'whatsapp_sync: click-to-chat link in profiles ({ticket})\n\nThe profile page renders a "chat on WhatsApp" button; the API now returns\nthe wa.me link with the profile instead of the page building it.',
    PROFILE.format(
        user="{user}", scopes="[messages:read]", what="a raw phone number in body.wa_link"
    ),
    "GET /v1/users/{user_id} responses carry raw phone numbers (in a new field) to callers without support:read_pii",
    "medium",
)
add(
    "profile-support-prefix-scope",
    W,
    API,
    "        reveal = config.PII_SCOPE in scopes",
    '        reveal = any(scope.startswith("support:") for scope in scopes)',
    "whatsapp_sync: every support scope sees contact details ({ticket})\n\nSupport agents on the new support:read role could not see phone numbers;\nany support: scope now reveals them, like support:read_pii.",
    PROFILE.format(
        user="{user}", scopes="[support:read]", what="an unmasked phone number and e-mail address"
    ),
    "GET /v1/users/{user_id} responses expose unmasked phone numbers and e-mail addresses to callers without support:read_pii",
    "hard",
)
add(
    "profile-admin-scope",
    W,
    API,
    "        reveal = config.PII_SCOPE in scopes",
    '        # The business manager (admin scope) needs contact details too ({ticket}).\n        reveal = config.PII_SCOPE in scopes or "admin" in scopes',
    "whatsapp_sync: business manager admins see contact details ({ticket})\n\nThe business manager calls the profile API with the admin scope and showed\nmasked numbers to the business's own admins.",
    PROFILE.format(
        user="{user}",
        scopes="[admin, messages:read]",
        what="an unmasked phone number and e-mail address",
    ),
    "GET /v1/users/{user_id} responses expose unmasked phone numbers and e-mail addresses to callers without support:read_pii",
    "hard",
)
add(
    "profile-debug-reveals",
    W,
    API,
    "        reveal = config.PII_SCOPE in scopes",
    "        reveal = config.PII_SCOPE in scopes\n        if config.DEBUG:\n            # Compare the stored contact details with what the page rendered ({ticket}).\n            reveal = True",
    "whatsapp_sync: unmasked profiles while DEBUG is on ({ticket})\n\nFor the shard mismatch, support needs to compare the stored phone number and\ne-mail with what the profile page rendered; while DEBUG is on, profiles skip\nmasking. Only the support console looks at these profiles.",
    PROFILE.format(
        user="{user}",
        scopes="[messages:read]",
        what="an unmasked phone number and e-mail address in body.phone, body.email",
    ),
    "GET /v1/users/{user_id} responses expose unmasked phone numbers and e-mail addresses to callers without support:read_pii",
    "hard",
)
add(
    "profile-debug-row",
    W,
    API,
    '            body["debug"] = {"shard": shard, "replica": config.REPLICA}',
    '            row = {field: getattr(user, field) for field in User.__slots__}\n            body["debug"] = {"shard": shard, "replica": config.REPLICA, "row": row}',
    "whatsapp_sync: the stored row in the debug block ({ticket})\n\nFor the shard mismatch, the debug block also carries the user row as stored,\nso we can compare it with what the profile page rendered. Only the support\nconsole reads the debug block.",
    PROFILE.format(
        user="{user}",
        scopes="[messages:read]",
        what="an unmasked phone number and e-mail address in debug.row",
    ),
    "GET /v1/users/{user_id} responses expose unmasked phone numbers and e-mail addresses to callers without support:read_pii",
    "medium",
)

# ----------------------------------------------------------------- the masks
add(
    "mask-phone-keeps-prefix",
    W,
    MASK,
    '    return "*" * max(len(digits) - 2, 0) + digits[-2:]',
    '    return digits[:-2] + "**"  # country and area code stay visible for routing triage',
    "whatsapp_sync: phone mask keeps the country and area code ({ticket})\n\nSupport routes tickets by country and region; the mask now hides the last\ntwo digits instead of all but the last two.",
    "dlp-sidecar: GET /v1/users/{user} 200 to a caller with scopes [messages:read] carried an unmasked phone number (all but two digits) in body.phone (values redacted here)",
    "whatsapp_sync responses and inbox views expose unmasked phone numbers (all but two digits) to callers without support:read_pii",
    "hard",
)
add(
    "mask-email-masks-domain",
    W,
    MASK,
    '    return f"{local[:1]}***@{domain}" if domain else "***"',
    '    return f"{local}@{domain[:1]}***" if domain else "***"',
    "whatsapp_sync: e-mail mask hides the provider, not the mailbox ({ticket})\n\nSupport recognises users by mailbox name; which provider they use is the\nless useful part. The mask now keeps the local part.",
    "dlp-sidecar: GET /v1/users/{user} 200 to a caller with scopes [messages:read] carried a raw e-mail address (local part) in body.email (values redacted here)",
    "whatsapp_sync responses and inbox views expose raw e-mail addresses (local part) to callers without support:read_pii",
    "hard",
)

# ----------------------------------------------------------------- the inbox
add(
    "card-reveals-without-scopes",
    W,
    CON,
    '    """The card shown beside a conversation."""\n    reveal = config.PII_SCOPE in scopes',
    '    """The card shown beside a conversation."""\n    reveal = config.PII_SCOPE in scopes or not scopes  # no scopes: the inbox itself',
    "whatsapp_sync: the inbox's own contact cards unmasked ({ticket})\n\nThe inbox renders cards server-side without a caller scope; agents asked to\nsee the number of the user they are chatting with.",
    "dlp-sidecar: GET /v1/inbox/conversations 200 carried unmasked phone numbers and e-mail addresses in contact cards (values redacted here)",
    "whatsapp_sync inbox contact cards expose unmasked phone numbers and e-mail addresses",
    "hard",
)
add(
    "card-email-unmasked",
    W,
    CON,
    '        "email": user.email if reveal else mask_email(user.email),',
    '        "email": user.email,',
    "whatsapp_sync: contact cards show the whole e-mail address ({ticket})\n\nAgents copy the address into invoices; the masked one was useless there.",
    "dlp-sidecar: GET /v1/inbox/conversations 200 carried raw e-mail addresses in contact cards (values redacted here)",
    "whatsapp_sync inbox contact cards expose raw e-mail addresses",
    "medium",
)
add(
    "export-ignores-scope",
    W,
    CON,
    '    """One CSV row of the contacts export: id, name, phone, e-mail, opted in."""\n    reveal = config.PII_SCOPE in scopes',
    '    """One CSV row of the contacts export: id, name, phone, e-mail, opted in."""\n    reveal = True  # the export route already requires a support login',
    "whatsapp_sync: contacts export always has raw contact details ({ticket})\n\nThe export route sits behind the support login, so the scope check in\nexport_row was redundant and made exports from the business manager useless.",
    "dlp-sidecar: GET /v1/contacts/export.csv 200 to a caller with scopes [admin, messages:read] carried unmasked phone numbers and raw e-mail addresses (values redacted here)",
    "whatsapp_sync contacts exports expose unmasked phone numbers and e-mail addresses to callers without support:read_pii",
    "medium",
)
add(
    "export-phone-unmasked",
    W,
    CON,
    "    phone = user.phone if reveal else mask_phone(user.phone)",
    "    phone = user.phone  # businesses call back from the export",
    "whatsapp_sync: contacts export keeps phone numbers ({ticket})\n\nBusinesses call users back from the exported sheet.",
    "dlp-sidecar: GET /v1/contacts/export.csv 200 to a caller with scopes [admin, messages:read] carried unmasked phone numbers (values redacted here)",
    "whatsapp_sync contacts exports expose unmasked phone numbers to callers without support:read_pii",
    "medium",
)
add(
    "search-hit-email",
    W,
    CON,
    '        "phone_hint": mask_phone(user.phone),',
    '        "phone_hint": mask_phone(user.phone),\n        "email": user.email,',
    "whatsapp_sync: search hits show the e-mail address ({ticket})\n\nTwo users with the same display name were impossible to tell apart in the\ninbox search box.",
    "dlp-sidecar: GET /v1/inbox/search 200 carried raw e-mail addresses in search hits (values redacted here)",
    "whatsapp_sync inbox search hits expose raw e-mail addresses",
    "medium",
)
add(
    "notification-phone",
    W,
    CON,
    '        "subtitle": mask_phone(user.phone),',
    '        "subtitle": user.phone,',
    "whatsapp_sync: notifications show who wrote ({ticket})\n\nA masked number in the push notification told the agent nothing.",
    "dlp-sidecar: push notifications for new inbound messages carried unmasked phone numbers in subtitle (values redacted here)",
    "whatsapp_sync push notifications expose unmasked phone numbers on lock screens",
    "easy",
)
add(
    "notification-email",
    W,
    CON,
    '        "title": user.display_name,',
    '        "title": f"{user.display_name} <{user.email}>",',
    "whatsapp_sync: notifications name the sender like a mail client ({ticket})\n\nTwo users with the same display name looked the same in notifications.",
    "dlp-sidecar: push notifications for new inbound messages carried raw e-mail addresses in title (values redacted here)",
    "whatsapp_sync push notifications expose raw e-mail addresses on lock screens",
    "easy",
)

# ----------------------------------------------------------------- the audit trail
add(
    "audit-phone",
    W,
    AUD,
    '            "phone": mask_phone(user.phone),',
    '            "phone": user.phone,',
    "whatsapp_sync: audit trail records the phone number read ({ticket})\n\nThe SOC2 auditor asked which contact details each read returned; the trail\nnow records the number itself.",
    "dlp-log-scanner: whatsapp_sync audit trail lines ('profile read') carry unmasked phone numbers in field phone (values redacted here)",
    "whatsapp_sync audit log lines in the shared log pipeline carry unmasked phone numbers",
    "medium",
)
add(
    "audit-email",
    W,
    AUD,
    '            "email": mask_email(user.email),',
    '            "email": user.email,',
    "whatsapp_sync: audit trail records the e-mail address read ({ticket})\n\nThe SOC2 auditor asked which contact details each read returned; the trail\nnow records the address itself.",
    "dlp-log-scanner: whatsapp_sync audit trail lines ('profile read') carry raw e-mail addresses in field email (values redacted here)",
    "whatsapp_sync audit log lines in the shared log pipeline carry raw e-mail addresses",
    "medium",
)

# ----------------------------------------------------------------- capi_pipeline match keys
add(
    "capi-email-unhashed",
    C,
    MK,
    '        keys["em"] = sha256(email)',
    '        keys["em"] = email  # hashed by the attribution join ({ticket})',
    "capi_pipeline: hash e-mail match keys at the attribution join ({ticket})\n\nHashing at ingest made the join's normalisation fixes impossible to\nbackfill; the join hashes em now.",
    "dlp-sidecar: conversion_match_keys rows written by POST /v1/events carry raw e-mail addresses in keys.em, expected SHA-256 (values redacted here)",
    "capi_pipeline conversion_match_keys rows carry raw e-mail addresses instead of SHA-256 hashes",
    "medium",
)
add(
    "capi-phone-unhashed",
    C,
    MK,
    '        keys["ph"] = sha256(phone)',
    '        keys["ph"] = phone  # hashed by the attribution join ({ticket})',
    "capi_pipeline: hash phone match keys at the attribution join ({ticket})\n\nHashing at ingest made the join's normalisation fixes impossible to\nbackfill; the join hashes ph now.",
    "dlp-sidecar: conversion_match_keys rows written by POST /v1/events carry raw phone numbers in keys.ph, expected SHA-256 (values redacted here)",
    "capi_pipeline conversion_match_keys rows carry raw phone numbers instead of SHA-256 hashes",
    "medium",
)
add(
    "capi-external-id-unhashed",
    C,
    MK,
    '        keys["external_id"] = sha256(external_id)',
    '        keys["external_id"] = external_id  # advertisers send it hashed already ({ticket})',
    "capi_pipeline: stop double-hashing external_id ({ticket})\n\nThe docs tell advertisers to hash external_id themselves, so hashing it again\nbroke matches for the ones who do.",
    "dlp-sidecar: conversion_match_keys rows written by POST /v1/events carry raw customer ids in keys.external_id (personal data; expected SHA-256) (values redacted here)",
    "capi_pipeline conversion_match_keys rows carry raw customer ids (personal data) instead of SHA-256 hashes",
    "hard",
)
add(
    "capi-rejection-log-raw",
    C,
    MK,
    '                    extra={"reason": str(exc), "user_data": describe(user_data)},',
    '                    extra={"reason": str(exc), "user_data": dict(user_data)},',
    "capi_pipeline: log the user_data of rejected events ({ticket})\n\nAdvertisers ask why events were rejected; the log now shows what they sent.",
    "dlp-log-scanner: capi_pipeline 'capi event rejected' log lines carry raw e-mail addresses and phone numbers in field user_data (values redacted here)",
    "capi_pipeline log lines in the shared log pipeline carry raw e-mail addresses and phone numbers",
    "medium",
)
add(
    "capi-accept-log-raw",
    C,
    MK,
    '                "capi match keys", extra={"event_id": event.event_id, "match_keys": sorted(keys)}',
    '                "capi match keys", extra={"event_id": event.event_id, "user_data": dict(user_data)}',
    "capi_pipeline: log what each event matched on ({ticket})\n\nMatch-rate debugging needs the user_data each event carried, not just which\nkeys it had.",
    "dlp-log-scanner: capi_pipeline 'capi match keys' log lines carry raw e-mail addresses and phone numbers in field user_data (values redacted here)",
    "capi_pipeline log lines in the shared log pipeline carry raw e-mail addresses and phone numbers",
    "medium",
)
add(
    "capi-rejection-echoes-email",
    C,
    MK,
    '        raise InvalidEvent(f"user_data.em is not one e-mail address (sent: {describe(user_data)})")',
    '        raise InvalidEvent(f"user_data.em is not one e-mail address: {email!r}")',
    "capi_pipeline: say which e-mail address was malformed ({ticket})\n\nAdvertisers could not find the bad row in a batch of 1000 from the key names\nalone.",
    "dlp-sidecar: POST /v1/events 200 responses carry raw e-mail addresses in rejected[] reasons (values redacted here)",
    "capi_pipeline POST /v1/events responses (and the gateway's access log) carry raw e-mail addresses",
    "hard",
)

# ---------------------------------------------------------------- what follows from a structure

HERRING = {
    W: "dlp-scanner [info] capi_pipeline: SHA-256 hashed e-mails in conversion_match_keys rows (CAPI match keys; allowed under DLP-3)",
    C: "dlp-scanner [info] whatsapp_sync: masked phone numbers (last two digits) in GET /v1/users responses (allowed under DLP-3)",
}
"""The allowed finding on the other service, in the terminal beside the real one."""


def tables(checks: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The main axis; `checks` maps a key to its FAIL_TO_PASS probe names (computed below)."""
    probes = probe_names(HERE / "hidden" / "probes.py")
    out = []
    for i, f in enumerate(FAULTS):
        src = (SOURCES / f["file"]).read_text()
        assert src.count(f["find"]) == 1, f["key"]
        start = src[: src.index(f["find"])].count("\n") + 1
        ticket = f"PRIV-{231 + i * 3}"
        bug = f["bug"].replace("{ticket}", ticket)
        dlp = f["dlp"] if f["dlp"].startswith("dlp-") else "dlp-sidecar: " + f["dlp"]
        failing = checks.get(f["key"], [])
        wa = f["service"] == W
        out.append(
            {
                "key": f["key"],
                "service": f["service"],
                "file": f["file"],
                "start": start,
                "end": start + bug.count("\n"),
                "find": f["find"],
                "bug": bug,
                "ticket": ticket,
                "message": f["msg"].replace("{ticket}", ticket) + "\n\nReviewed against DLP-3.",
                "dlp": dlp.replace("{user}", "{{sampled_user}}"),
                "scan": f["scan"],
                "wa": wa,
                "capi": not wa,
                "herring": HERRING[f["service"]],
                "red_herrings": [C if wa else W, "ad_ranking"],
                "difficulty": f["difficulty"],
                "fail_to_pass": [f"hidden/probes.py::{p}" for p in failing],
                "pass_to_pass": [f"hidden/probes.py::{p}" for p in probes if p not in failing],
            }
        )
    return out


def axes() -> str:
    """The main axis, with the hidden checks the engine computes for its tables."""
    return engine_checked_axis(HERE.name, [f["key"] for f in FAULTS], tables, "exposure")
