"""Clicks from the ads frontend's click log, for the attribution job."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ad_ranking.attribution import Click


def click_from_log(record: Mapping[str, Any]) -> Click:
    """One click-log record as a Click. Web clicks carry `ts_ms`, epoch milliseconds; clicks the
    app SDKs report carry `ts`, epoch seconds (both UTC)."""
    if "ts_ms" in record:
        click_time = int(record["ts_ms"]) // 1000
    else:
        click_time = int(record["ts"])
    return Click(str(record["click_id"]), str(record["ad_id"]), click_time)


def clicks_from_log(records: Iterable[Mapping[str, Any]]) -> list[Click]:
    """Every record that is a click (the log also carries impressions), in log order."""
    return [click_from_log(r) for r in records if r.get("kind", "click") == "click"]
