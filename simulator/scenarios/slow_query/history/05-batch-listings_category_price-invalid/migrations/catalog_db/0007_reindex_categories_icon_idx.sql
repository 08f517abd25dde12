-- catalog-db 0007_reindex_categories_icon_idx
-- categories_icon_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY categories_icon_idx;
