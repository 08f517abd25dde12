-- catalog-db 0006_add_sellers_onboarding_step_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS sellers_onboarding_step_idx ON sellers (onboarding_step);
