-- orders-db 0008_payouts_add_failure_reason
ALTER TABLE payouts ADD COLUMN failure_reason text;
