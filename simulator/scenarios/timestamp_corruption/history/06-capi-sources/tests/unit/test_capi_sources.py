"""Unit tests for reading event_time per integration source (ADS-2230)."""

from capi_pipeline import InvalidEvent, normalize_event

T = 1_772_000_000  # 2026-02-25T06:13:20Z


def _time(source, **fields):
    raw = {"event_id": "e", "event_name": "Purchase", "source": source}
    raw.update(fields)
    return normalize_event(raw).event_time


def test_each_source_is_read_in_its_own_unit():
    assert _time("pixel", event_time=T * 1000 + 999) == T
    assert _time("app_ios", event_time=T - 978_307_200 + 0.5) == T
    assert _time("crm", event_time=T * 1_000_000 + 7) == T
    assert _time("crm", event_time=T * 1000 + 7, time_unit="ms") == T
    assert _time("crm", event_time=T, time_unit="s") == T
    assert _time("commerce_partner", event_time=T, export_time=T + 5 * 86_400) == T


def test_android_and_offline_local_times_become_utc():
    assert _time("app_android", event_time=(T + 330 * 60) * 1000, tz_offset_minutes=330) == T
    assert _time("offline", event_time="2026-02-25T01:13:20-05:00") == T
    assert _time("offline", event_time="2026-02-25T01:13:20", account_id="act_1001") == T


def test_an_unknown_source_is_refused():
    try:
        _time("fax", event_time=T)
    except InvalidEvent as exc:
        assert "fax" in str(exc), exc
    else:
        raise AssertionError("an unknown source must be refused")
