-- catalog-db 0004_sellers_add_storefront_slug
ALTER TABLE sellers ADD COLUMN storefront_slug text;
