-- catalog-db 0007_reindex_sellers_onboarding_step_idx
-- sellers_onboarding_step_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY sellers_onboarding_step_idx;
