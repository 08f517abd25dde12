"""Security: capi_pipeline stores, logs and answers hashed match keys only; raw e-mail
addresses, phone numbers and customer ids never leave capi_pipeline/match_keys.py."""

import json
import logging
import re

from capi_pipeline.match_keys import MatchKeyIngestor, match_keys

USER_DATA = {"em": "Rafaela.Lima@Mail.example", "ph": "+55 (21) 99111-2233", "external_id": "crm-77801"}
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _leaks(anything):
    text = json.dumps(anything, default=str).lower()
    digits = "".join(ch for ch in text if ch.isdigit())
    found = [k for k in ("rafaela.lima", "crm-77801") if k in text]
    if "552199111" in digits:
        found.append("phone digits")
    return found


def _batch():
    base = {"event_name": "Purchase", "event_time": 1_717_000_000, "currency": "BRL"}
    return [
        {**base, "event_id": "a", "user_data": dict(USER_DATA)},
        {**base, "event_id": "b", "currency": "XXX", "user_data": dict(USER_DATA)},
        {**base, "event_id": "c", "user_data": {"em": "rafaela.lima@@mail.example"}},
    ]


def test_match_keys_are_sha256():
    keys = match_keys(USER_DATA)
    assert sorted(keys) == ["em", "external_id", "ph"], keys
    assert all(SHA256.match(v) for v in keys.values()), f"unhashed match keys: {keys}"


def test_stored_rows_and_rejections_carry_no_raw_user_data():
    ingestor = MatchKeyIngestor()
    stored, rejected = ingestor.ingest(_batch())
    assert (stored, len(rejected)) == (1, 2), (stored, rejected)
    assert not _leaks(ingestor.rows), ingestor.rows
    assert not _leaks(rejected), rejected


def test_logs_carry_no_raw_user_data():
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(dict(vars(record), message=record.getMessage()))

    logger = logging.getLogger("capi_pipeline")
    handler, level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        MatchKeyIngestor().ingest(_batch())
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert records, "ingest must log what it did"
    for record in records:
        assert not _leaks(record), f"log record leaks {_leaks(record)}: {record['message']}"
