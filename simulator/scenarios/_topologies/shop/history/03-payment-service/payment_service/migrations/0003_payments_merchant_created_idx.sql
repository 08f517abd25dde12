-- Merchant statements list a merchant's payments by date.
CREATE INDEX payments_merchant_created_idx ON payments (merchant_id, created_at);
