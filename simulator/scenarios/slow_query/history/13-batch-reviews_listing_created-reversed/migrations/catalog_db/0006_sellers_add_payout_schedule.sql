-- catalog-db 0006_sellers_add_payout_schedule
ALTER TABLE sellers ADD COLUMN payout_schedule text;
