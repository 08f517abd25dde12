"""catalog: listings on catalog-db; browse by category, the seller dashboard, title search."""
