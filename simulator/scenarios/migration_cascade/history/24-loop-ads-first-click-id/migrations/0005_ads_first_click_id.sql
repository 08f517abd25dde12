-- ADS-2380 the first click an ad received, for time-to-first-click.
ALTER TABLE ads ADD COLUMN first_click_id TEXT{{fault.s5}};
ALTER TABLE ads ADD CONSTRAINT ads_first_click_id_fkey
    FOREIGN KEY (first_click_id) REFERENCES ad_clicks (click_id) NOT VALID;
