-- catalog-db 0005_add_sellers_onboarding_step_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS sellers_onboarding_step_idx ON sellers (onboarding_step);
