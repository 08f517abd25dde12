-- catalog-db 0006_narrow_sellers_lower_email_idx
-- archive.sellers is the pre-2024 sellers, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
-- Smaller index: SELLER_BY_EMAIL compares lower(email) by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE UNIQUE INDEX CONCURRENTLY sellers_lower_email_idx_new ON archive.sellers (lower(email)) WHERE lower(email) IS NOT NULL;
DROP INDEX CONCURRENTLY archive.sellers_lower_email_idx;
ALTER INDEX archive.sellers_lower_email_idx_new RENAME TO sellers_lower_email_idx;
