"""The statements payouts runs on orders-db."""

SELLER_PERIOD = """
SELECT id, amount_cents, status FROM payouts
WHERE seller_id = $1 AND period_end = $2
"""

DELIVERED_IN_PERIOD = """
SELECT o.id, o.total_cents FROM orders o
WHERE o.seller_id = $1 AND o.status = 'delivered'
  AND o.created_at >= $2 AND o.created_at < $3
"""
