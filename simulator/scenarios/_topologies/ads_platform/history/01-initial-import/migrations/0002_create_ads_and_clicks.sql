-- ad_ranking: the ads we rank and the clicks conversions are attributed to.
CREATE TABLE ads (
    ad_id         TEXT PRIMARY KEY,
    campaign_id   TEXT NOT NULL,
    bid_micros    BIGINT NOT NULL CHECK (bid_micros >= 0),
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE ad_clicks (
    click_id      TEXT PRIMARY KEY,
    ad_id         TEXT NOT NULL REFERENCES ads (ad_id),
    click_time    BIGINT NOT NULL           -- epoch seconds, UTC
);

CREATE INDEX ad_clicks_ad_id_idx ON ad_clicks (ad_id);
