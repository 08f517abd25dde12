-- catalog-db 0004_add_categories_icon_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS categories_icon_idx ON categories (icon);
