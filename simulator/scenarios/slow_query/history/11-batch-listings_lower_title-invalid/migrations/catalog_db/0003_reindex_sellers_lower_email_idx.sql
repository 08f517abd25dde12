-- catalog-db 0003_reindex_sellers_lower_email_idx
-- sellers_lower_email_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY sellers_lower_email_idx;
