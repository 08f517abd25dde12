-- ADS-2375 the events capi_pipeline accepts (config.ALLOWED_EVENT_NAMES). NOT VALID: new writes
-- are checked.
ALTER TABLE conversion_events ADD CONSTRAINT conversion_events_event_name_check
    CHECK (event_name IN ('Purchase', {{fault.s6}}'CompleteRegistration', 'Subscribe', 'AddToCart')) NOT VALID;
