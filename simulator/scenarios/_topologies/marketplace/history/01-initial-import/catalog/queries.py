"""The statements catalog runs on catalog-db, by name (the name shows in pg_stat_statements)."""

BROWSE_CATEGORY = """
SELECT id, title, price_cents FROM listings
WHERE category_id = $1 AND status = 'active'
ORDER BY price_cents LIMIT $2 OFFSET $3
"""

SELLER_DASHBOARD = """
SELECT id, title, status, price_cents, updated_at FROM listings
WHERE seller_id = $1 AND status = $2
ORDER BY updated_at DESC LIMIT 50
"""

TITLE_PREFIX = """
SELECT id, title FROM listings
WHERE lower(title) LIKE lower($1) || '%' AND status = 'active'
ORDER BY title LIMIT 20
"""

LISTING_IMAGES = """
SELECT url FROM listing_images WHERE listing_id = $1 ORDER BY position
"""

SELLER_BY_EMAIL = """
SELECT id, display_name FROM sellers WHERE lower(email) = lower($1)
"""
