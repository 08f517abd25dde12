-- catalog-db 0004_narrow_sellers_created_idx
-- Smaller index: the admin list reads active sellers only.
DROP INDEX CONCURRENTLY sellers_created_idx;
CREATE INDEX CONCURRENTLY sellers_created_idx ON sellers (created_at) WHERE status = 'active';
