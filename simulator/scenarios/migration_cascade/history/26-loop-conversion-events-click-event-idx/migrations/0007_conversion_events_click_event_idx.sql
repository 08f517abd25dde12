-- The attribution job looks up a click's conversions by event. CONCURRENTLY: writes are not
-- blocked.
CREATE {{fault.s7}}INDEX CONCURRENTLY conversion_events_click_id_event_name_idx
    ON conversion_events (click_id, event_name);
