"""The statements reviews runs on catalog-db."""

LATEST_FOR_LISTING = """
SELECT id, author_id, rating, body, created_at FROM reviews
WHERE listing_id = $1
ORDER BY created_at DESC LIMIT 10
"""

BY_AUTHOR = """
SELECT id, listing_id, rating, created_at FROM reviews
WHERE author_id = $1
ORDER BY created_at DESC LIMIT 50
"""
