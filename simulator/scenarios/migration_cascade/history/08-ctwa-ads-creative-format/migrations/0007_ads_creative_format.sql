-- ADS-2331 creative format (image, video, carousel) for the format-aware pCTR prior.
ALTER TABLE ads ADD COLUMN creative_format TEXT;
UPDATE ads SET creative_format = 'image' WHERE creative_format IS NULL;{{fault.s7}}
