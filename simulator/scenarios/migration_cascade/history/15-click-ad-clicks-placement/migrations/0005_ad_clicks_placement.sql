-- ADS-2361 the surface a click came from (feed, stories, search).
ALTER TABLE ad_clicks ADD COLUMN placement TEXT;
UPDATE ad_clicks SET placement = 'feed' WHERE placement IS NULL;{{fault.s5}}
