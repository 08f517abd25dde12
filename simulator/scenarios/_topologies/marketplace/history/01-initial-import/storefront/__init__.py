"""storefront: the web BFF; composes catalog, orders and reviews answers into pages."""
