-- catalog-db 0007_reindex_sellers_lower_email_idx
-- sellers_lower_email_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY sellers_lower_email_idx;
CREATE UNIQUE INDEX CONCURRENTLY sellers_lower_email_idx ON sellers (lower(email));
