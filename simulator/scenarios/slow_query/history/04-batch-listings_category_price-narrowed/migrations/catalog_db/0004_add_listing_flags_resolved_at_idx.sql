-- catalog-db 0004_add_listing_flags_resolved_at_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS listing_flags_resolved_at_idx ON listing_flags (resolved_at);
