-- ADS-2390 one index for the attribution job's lookups by click and by click and event.
-- CONCURRENTLY: writes are not blocked.
CREATE INDEX CONCURRENTLY conversion_events_click_lookup_idx
    ON conversion_events ({{fault.s5}});
DROP INDEX CONCURRENTLY conversion_events_click_id_idx;
