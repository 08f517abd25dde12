-- orders-db 0008_reindex_orders_promo_code_idx
-- orders_promo_code_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY orders_promo_code_idx;
