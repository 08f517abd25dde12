"""search_indexer: consumes the listing-changes queue and writes search documents."""
