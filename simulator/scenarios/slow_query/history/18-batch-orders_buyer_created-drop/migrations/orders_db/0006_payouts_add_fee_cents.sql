-- orders-db 0006_payouts_add_fee_cents
ALTER TABLE payouts ADD COLUMN fee_cents integer;
