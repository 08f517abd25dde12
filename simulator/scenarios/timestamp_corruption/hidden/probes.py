"""Grader probes for meta-sre/timestamp-corruption-v2 (never shown to agents).

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

The seed picks where event or click times get corrupted, so the probes cover every path a time
takes: each integration source through ingest into attribution, the server-side seconds and
milliseconds rule, the click log, the attribution window, and whatsapp_sync's status order.
The ones that reach this seed's site are its FAIL_TO_PASS checks (from the seed's fault
table); the three `*_unchanged` probes run all the others as PASS_TO_PASS, so a "fix" that
widens the window or shifts every time to make the numbers look right is a regression. Inputs
sit well clear of any cut-off a correct fix could choose.
"""

import inspect
from datetime import datetime, timedelta, timezone

from ad_ranking import AdCandidate, AdStats, Click, attribute_conversions, build_features, rank_ads
from ad_ranking.clicks import clicks_from_log
from capi_pipeline import ConversionEvent, ConversionIngestor, InMemoryEventStore, InvalidEvent
from capi_pipeline import normalize_event, normalize_timestamp


HOUR = 3600
DAY = 24 * HOUR
CLICK = {{sample.click}}
DELAYS = (40 * 60, 5 * HOUR, 2 * DAY, 6 * DAY + 20 * HOUR, 8 * DAY)
"""Conversion delays after the click: four inside the 7-day window, one past it."""


def _raised(exc):
    return {"raised": type(exc).__name__}


def _end_to_end(source, write):
    """Conversions at DELAYS after a click, written by `write` the way `source` does, through
    ingest and attribution: what is stored and what is credited."""
    raw = []
    for n, delay in enumerate(DELAYS):
        event = {"event_id": f"{source}-{n}", "event_name": "Purchase", "click_id": "clk-1",
                 "source": source}
        event.update(write(CLICK + delay))
        raw.append(event)
    store = InMemoryEventStore()
    try:
        result = ConversionIngestor(store).ingest(raw)
    except Exception as exc:  # noqa: BLE001 - what escaped ingest is the observation
        return _raised(exc)
    events = store.all_events()
    return {
        "accepted": result.accepted,
        "rejected": len(result.rejected),
        "delays": {e.event_id: e.event_time - CLICK for e in events},
        "attributed": dict(attribute_conversions([Click("clk-1", "ad-x", CLICK)], events)),
    }


def _iso(t, minutes, with_offset=True):
    local = datetime.fromtimestamp(t, timezone(timedelta(minutes=minutes)))
    return local.isoformat() if with_offset else local.replace(tzinfo=None).isoformat()


# --- capi_pipeline, one probe per path an event time takes -----------------------------------


def server_seconds_are_attributed():
    return _end_to_end("server", lambda t: {"event_time": t})


def server_string_and_fractional_seconds():
    observed = []
    for seconds in (1_000_000_000, 1_600_000_000, CLICK, 2_000_000_000, 4_000_000_000):
        try:
            observed.append([normalize_timestamp(seconds), normalize_timestamp(str(seconds)),
                             normalize_timestamp(seconds + 0.75)])
        except Exception as exc:  # noqa: BLE001
            observed.append(_raised(exc))
    return observed


def server_milliseconds_become_seconds():
    observed = []
    for millis in (1_000_000_000_000, CLICK * 1000 + 999, 4_000_000_000_000):
        try:
            observed.append([normalize_timestamp(millis), normalize_timestamp(str(millis))])
        except Exception as exc:  # noqa: BLE001
            observed.append(_raised(exc))
    return {"millis": observed,
            "end_to_end": _end_to_end("server", lambda t: {"event_time": t * 1000 + 5})}


def pixel_conversions_are_attributed():
    return _end_to_end("pixel", lambda t: {"event_time": t * 1000 + 499})


def ios_conversions_are_attributed():
    return _end_to_end("app_ios", lambda t: {"event_time": t - 978_307_200 + 0.5})


def android_conversions_are_attributed():
    east = _end_to_end("app_android",
                       lambda t: {"event_time": (t + 330 * 60) * 1000 + 7, "tz_offset_minutes": 330})
    west = _end_to_end("app_android",
                       lambda t: {"event_time": (t - 300 * 60) * 1000, "tz_offset_minutes": -300})
    utc = _end_to_end("app_android", lambda t: {"event_time": t * 1000})
    return {"east": east, "west": west, "utc": utc}


def offline_conversions_with_an_offset():
    return {
        "west": _end_to_end("offline", lambda t: {"event_time": _iso(t, -300)}),
        "east": _end_to_end("offline", lambda t: {"event_time": _iso(t, 60), "account_id": "act_3107"}),
    }


def offline_conversions_in_the_account_time_zone():
    return {
        account: _end_to_end("offline", lambda t, m=minutes, a=account: {
            "event_time": _iso(t, m, with_offset=False), "account_id": a})
        for account, minutes in (("act_1001", -300), ("act_3107", 330))
    }


def crm_conversions_are_attributed():
    return {
        "us": _end_to_end("crm", lambda t: {"event_time": t * 1_000_000 + 123}),
        "ms": _end_to_end("crm", lambda t: {"event_time": t * 1000 + 9, "time_unit": "ms"}),
        "s": _end_to_end("crm", lambda t: {"event_time": t, "time_unit": "s"}),
    }


def commerce_partner_conversions_are_attributed():
    return _end_to_end("commerce_partner",
                       lambda t: {"event_time": t, "export_time": t + 9 * DAY})


def bad_event_times_still_rejected():
    observed = []
    for raw in ({"event_time": None}, {"event_time": "yesterday"}, {"event_time": -1},
                {"event_time": 0}, {"event_time": "soon", "source": "pixel"},
                {"event_time": "2026-13-45", "source": "offline"},
                {"event_time": CLICK, "source": "fax"}):
        event = {"event_id": "bad", "event_name": "Lead", **raw}
        try:
            observed.append({"returned": normalize_event(event).event_time})
        except InvalidEvent as exc:
            observed.append({"raised": type(exc).__name__})
        except Exception as exc:  # noqa: BLE001
            observed.append(_raised(exc))
    return observed


def capi_batch_limit():
    ingestor = ConversionIngestor(InMemoryEventStore())
    batch = [{"event_id": f"e{i}", "event_name": "Lead", "event_time": CLICK} for i in range(1001)]
    try:
        ingestor.ingest(batch)
    except InvalidEvent as exc:
        oversize = {"raised": type(exc).__name__, "names_the_size": "1001" in str(exc)}
    else:
        oversize = {"raised": None}
    return {"oversize": oversize, "accepted_of_1000": ingestor.ingest(batch[:1000]).accepted}


# --- ad_ranking -------------------------------------------------------------------------------


def attribution_window_is_seven_days():
    clicks = [Click("k", "ad-a", CLICK), Click("k2", "ad-b", CLICK + HOUR)]
    conversions = [ConversionEvent(f"c{n}", "Purchase", CLICK + delay, "k", 0, "USD")
                   for n, delay in enumerate((-1, 0, 90, 3 * HOUR, 3 * DAY, 7 * DAY, 7 * DAY + 1))]
    conversions.append(ConversionEvent("d", "Lead", CLICK + 2 * HOUR, "k2", 0, "USD"))
    return dict(attribute_conversions(clicks, conversions))


def click_log_clicks_meet_their_conversions():
    log = [{"kind": "impression", "ad_id": "ad-a", "ts_ms": CLICK * 1000 - 4000},
           {"kind": "click", "click_id": "clk-1", "ad_id": "ad-a", "ts_ms": CLICK * 1000 + 640},
           {"kind": "click", "click_id": "clk-2", "ad_id": "ad-b", "ts_ms": (CLICK + 7 * HOUR) * 1000},
           {"kind": "click", "click_id": "clk-3", "ad_id": "ad-c", "ts": CLICK + 3 * HOUR}]
    try:
        clicks = clicks_from_log(log)
    except Exception as exc:  # noqa: BLE001
        return _raised(exc)
    conversions = [ConversionEvent("e1", "Purchase", CLICK + 2 * HOUR, "clk-1", 0, "USD"),
                   ConversionEvent("e2", "Lead", CLICK + 3 * DAY, "clk-2", 0, "USD"),
                   ConversionEvent("e3", "Subscribe", CLICK + 2 * DAY, "clk-3", 0, "USD")]
    return {"clicks": [[c.click_id, c.ad_id, c.click_time - CLICK] for c in clicks],
            "attributed": dict(attribute_conversions(clicks, conversions))}


def ranking_unchanged():
    rows = {"ad-a": build_features(AdStats("ad-a", 10_000, 300, 30)),
            "ad-b": build_features(AdStats("ad-b", 10_000, 300, 3)),
            "ad-c": build_features(AdStats("ad-c", 10_000, 300, 30, quality=0.5))}
    candidates = [AdCandidate("ad-c", "c1", 1_000_000), AdCandidate("ad-b", "c1", 1_000_000),
                  AdCandidate("ad-a", "c2", 1_000_000)]
    return [[ad.ad_id, round(ad.score, 6)] for ad in rank_ads(candidates, rows)]


# --- whatsapp_sync ----------------------------------------------------------------------------


def _api():
    from whatsapp_sync import MessageRepository, SyncApi, repository

    rows = {}

    class Conn:
        async def fetch_one(self, query, *args):
            row = rows.get(args[0])
            return dict(row) if row else None

        async def execute(self, query, *args):
            if query == repository.UPDATE_STATUS:
                rows[args[0]].update(status=args[1], updated_at=args[2])
            else:
                rows[args[0]] = {"message_id": args[0], "status": "received", "updated_at": args[3]}
            return 1

    class Pool:
        async def acquire(self):
            return Conn()

        async def release(self, conn):
            return None

    return SyncApi(MessageRepository(Pool())), rows


async def _statuses(api, message_id, updates):
    answers = []
    for status, at in updates:
        try:
            answer = await api.status_webhook(
                {"message_id": message_id, "status": status, "timestamp": str(at)})
        except Exception as exc:  # noqa: BLE001
            answer = _raised(exc)
        answers.append(answer.get("body", {}).get("changed", answer.get("status")))
    return answers


async def whatsapp_statuses_keep_the_newest():
    api, rows = _api()
    await api.inbound_webhook({"message_id": "m1", "from": "u-1", "timestamp": str(CLICK)})
    changed = await _statuses(api, "m1", [("sent", CLICK + 5), ("read", CLICK + 90),
                                          ("delivered", CLICK + 30), ("failed", CLICK + 600)])
    return {"changed": changed, "status": rows["m1"]["status"],
            "updated_after": rows["m1"]["updated_at"] - CLICK}


async def whatsapp_inbound_messages_keep_their_time():
    api, rows = _api()
    answers = []
    for n, at in enumerate((CLICK, CLICK + 61, CLICK + DAY)):
        answer = await api.inbound_webhook({"message_id": f"in-{n}", "from": "u-2",
                                            "timestamp": str(at), "text": "hi"})
        answers.append(answer["status"])
    changed = await _statuses(api, "in-1", [("read", CLICK + 120), ("delivered", CLICK + 62)])
    return {"answers": answers, "stored": {k: v["updated_at"] - CLICK for k, v in rows.items()},
            "changed": changed, "in-1": rows["in-1"]["status"]}


# --- PASS_TO_PASS: every path this seed did not break ----------------------------------------

CAPI = (server_seconds_are_attributed, server_string_and_fractional_seconds,
        server_milliseconds_become_seconds, pixel_conversions_are_attributed,
        ios_conversions_are_attributed, android_conversions_are_attributed,
        offline_conversions_with_an_offset, offline_conversions_in_the_account_time_zone,
        crm_conversions_are_attributed, commerce_partner_conversions_are_attributed,
        bad_event_times_still_rejected, capi_batch_limit)
AD_RANKING = (attribution_window_is_seven_days, click_log_clicks_meet_their_conversions,
              ranking_unchanged)
WHATSAPP = (whatsapp_statuses_keep_the_newest, whatsapp_inbound_messages_keep_their_time)


def _unbroken(probes):
    # every site: the grader leaves out the entries of this seed's FAIL_TO_PASS probes on its
    # own side (metasre.simulator.hidden), so this module names none of them
    return list(probes)


def capi_pipeline_unchanged():
    return {p.__name__: p() for p in _unbroken(CAPI)}


def ad_ranking_unchanged():
    return {p.__name__: p() for p in _unbroken(AD_RANKING)}


async def whatsapp_sync_unchanged():
    observed = {}
    for probe in _unbroken(WHATSAPP):
        result = probe()
        observed[probe.__name__] = await result if inspect.isawaitable(result) else result
    return observed
