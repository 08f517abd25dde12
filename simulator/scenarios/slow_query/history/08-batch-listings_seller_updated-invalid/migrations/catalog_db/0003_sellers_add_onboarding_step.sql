-- catalog-db 0003_sellers_add_onboarding_step
ALTER TABLE sellers ADD COLUMN onboarding_step integer;
