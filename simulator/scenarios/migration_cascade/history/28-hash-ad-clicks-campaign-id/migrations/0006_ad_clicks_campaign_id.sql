-- ADS-2384 campaign-level attribution without a join on ads; backfilled from ads.
ALTER TABLE ad_clicks ADD COLUMN campaign_id TEXT;
UPDATE ad_clicks SET campaign_id = ads.campaign_id FROM ads
    WHERE ads.ad_id = ad_clicks.ad_id AND ad_clicks.campaign_id IS NULL;{{fault.s6}}
