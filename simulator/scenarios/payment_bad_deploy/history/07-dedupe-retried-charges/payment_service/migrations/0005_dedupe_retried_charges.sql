-- PAY-1187: a retried charge must not bill the card twice. Retries carry the same
-- {{missing_column}}; payment-service looks it up before calling the card provider, so the
-- lookup is indexed, and unique per merchant.
CREATE UNIQUE INDEX payments_merchant_{{missing_column}}_key
    ON payments (merchant_id, {{missing_column}})
    WHERE {{missing_column}} IS NOT NULL;
