-- catalog-db 0005_drop_unused_sellers_onboarding_step_idx
-- pg_stat_user_indexes shows idx_scan = 0 for sellers_onboarding_step_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS sellers_onboarding_step_idx;
