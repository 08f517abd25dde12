-- orders-db 0005_payouts_add_iban_last4
ALTER TABLE payouts ADD COLUMN iban_last4 char(4);
