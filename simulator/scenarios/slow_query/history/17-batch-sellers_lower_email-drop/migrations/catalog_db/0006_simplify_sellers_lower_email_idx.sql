-- catalog-db 0006_simplify_sellers_lower_email_idx
-- archive.sellers is the pre-2024 sellers, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
ALTER INDEX archive.sellers_lower_email_idx SET (fillfactor = 100);
REINDEX INDEX CONCURRENTLY archive.sellers_lower_email_idx;
