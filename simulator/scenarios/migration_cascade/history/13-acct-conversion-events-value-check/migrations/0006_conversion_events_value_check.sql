-- ADS-2356 a conversion's value is never negative. NOT VALID: new writes are checked.
ALTER TABLE conversion_events ADD CONSTRAINT conversion_events_value_micros_check
    CHECK (value_micros {{fault.s6}} 0) NOT VALID;
