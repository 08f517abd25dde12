-- catalog-db 0004_simplify_sellers_lower_email_idx
-- e-mails are lower-cased on write since catalog v3.10, so a plain index is enough.
CREATE UNIQUE INDEX CONCURRENTLY sellers_email_idx ON sellers (email);
DROP INDEX CONCURRENTLY sellers_lower_email_idx;
