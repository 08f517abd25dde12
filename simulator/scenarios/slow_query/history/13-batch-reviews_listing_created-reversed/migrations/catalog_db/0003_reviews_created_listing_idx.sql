-- catalog-db 0003_reviews_created_listing_idx
-- One index for both the per-key lookups and the time-range reports.
CREATE INDEX CONCURRENTLY reviews_created_listing_idx ON reviews (created_at DESC, listing_id);
DROP INDEX CONCURRENTLY reviews_listing_created_idx;
