-- orders-db 0005_reindex_refund_requests_reason_code_idx
-- refund_requests_reason_code_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY refund_requests_reason_code_idx;
