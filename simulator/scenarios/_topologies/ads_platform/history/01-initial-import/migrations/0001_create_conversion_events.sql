-- capi_pipeline: normalised conversion events, one row per advertiser event_id.
CREATE TABLE conversion_events (
    event_id      TEXT PRIMARY KEY,
    event_name    TEXT NOT NULL,
    event_time    BIGINT NOT NULL,          -- epoch seconds, UTC
    click_id      TEXT,                     -- not a foreign key: clicks may arrive later
    value_micros  BIGINT NOT NULL DEFAULT 0,
    currency      CHAR(3) NOT NULL,
    received_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX conversion_events_click_id_idx ON conversion_events (click_id);
