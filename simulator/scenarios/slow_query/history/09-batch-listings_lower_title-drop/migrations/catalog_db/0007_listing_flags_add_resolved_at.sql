-- catalog-db 0007_listing_flags_add_resolved_at
ALTER TABLE listing_flags ADD COLUMN resolved_at timestamptz;
