-- ADS-2360 cap bids at 1,000 units of the account currency. NOT VALID: new writes are checked.
ALTER TABLE ads ADD CONSTRAINT ads_bid_micros_cap_check
    CHECK (bid_micros <= {{fault.s7}}) NOT VALID;
