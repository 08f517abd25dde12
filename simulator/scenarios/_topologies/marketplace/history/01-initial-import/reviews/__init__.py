"""reviews: buyer reviews per listing on catalog-db, newest first, and the rating summary."""
