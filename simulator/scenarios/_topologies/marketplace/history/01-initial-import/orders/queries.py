"""The statements orders runs on orders-db."""

ORDER_HISTORY = """
SELECT id, status, total_cents, created_at FROM orders
WHERE buyer_id = $1
ORDER BY created_at DESC LIMIT 20
"""

ORDER_ITEMS = """
SELECT listing_id, qty, price_cents FROM order_items WHERE order_id = $1
"""

TRACKING_LOOKUP = """
SELECT order_id, carrier, status FROM shipments WHERE tracking_no = $1
"""

EXPIRE_PENDING = """
UPDATE orders SET status = 'expired'
WHERE status = 'pending' AND created_at < now() - interval '30 minutes'
RETURNING id
"""
