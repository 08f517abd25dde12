-- ADS-2340 where a conversion happened (website, app, chat, physical_store).
ALTER TABLE conversion_events ADD COLUMN action_source TEXT;
UPDATE conversion_events SET action_source = 'website' WHERE action_source IS NULL;{{fault.s5}}
