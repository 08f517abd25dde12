-- catalog-db 0006_simplify_listings_lower_title_idx
-- text_pattern_ops is a C-locale habit; the default operator class is smaller.
DROP INDEX CONCURRENTLY listings_lower_title_idx;
CREATE INDEX CONCURRENTLY listings_lower_title_idx ON listings (lower(title)) WHERE status = 'active';
