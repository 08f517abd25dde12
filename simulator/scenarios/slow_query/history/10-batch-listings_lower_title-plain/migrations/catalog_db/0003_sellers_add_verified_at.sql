-- catalog-db 0003_sellers_add_verified_at
ALTER TABLE sellers ADD COLUMN verified_at timestamptz;
