-- catalog-db 0003_narrow_sellers_lower_email_idx
-- Smaller index: SELLER_BY_EMAIL compares lower(email) by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE UNIQUE INDEX CONCURRENTLY sellers_lower_email_idx_new ON sellers (lower(email)) WHERE lower(email) IS NOT NULL;
DROP INDEX CONCURRENTLY sellers_lower_email_idx;
ALTER INDEX sellers_lower_email_idx_new RENAME TO sellers_lower_email_idx;
