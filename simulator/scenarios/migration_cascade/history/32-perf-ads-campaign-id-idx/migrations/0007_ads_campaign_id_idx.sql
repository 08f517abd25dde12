-- ADS-2393 the campaign dashboard lists a campaign's ads.
CREATE INDEX {{fault.s7}}ads_campaign_id_idx ON ads (campaign_id);
