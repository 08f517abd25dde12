-- The attribution job reads an ad's clicks by time. CONCURRENTLY: writes are not blocked.
CREATE {{fault.s6}}INDEX CONCURRENTLY ad_clicks_ad_id_click_time_idx ON ad_clicks (ad_id, click_time);
