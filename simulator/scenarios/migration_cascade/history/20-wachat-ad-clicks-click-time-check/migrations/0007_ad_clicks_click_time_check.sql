-- ADS-2366 click_time is epoch seconds (0002): keep milliseconds out. NOT VALID: new writes
-- are checked.
ALTER TABLE ad_clicks ADD CONSTRAINT ad_clicks_click_time_seconds_check
    CHECK (click_time {{fault.s7}} 10000000000) NOT VALID;
