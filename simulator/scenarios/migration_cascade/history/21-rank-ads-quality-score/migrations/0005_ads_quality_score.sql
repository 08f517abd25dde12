-- ADS-2372 creative quality, 0..1, set by the campaign sync; existing ads start at 1.0.
ALTER TABLE ads ADD COLUMN quality_score REAL;
UPDATE ads SET quality_score = 1.0 WHERE quality_score IS NULL;{{fault.s5}}
