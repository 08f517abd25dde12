-- PAY-1102: finance reports chargebacks by refund reason. Nullable: old refunds have none.
ALTER TABLE refunds ADD COLUMN reason text;
