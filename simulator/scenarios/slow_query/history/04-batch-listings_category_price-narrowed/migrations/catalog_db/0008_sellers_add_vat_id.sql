-- catalog-db 0008_sellers_add_vat_id
ALTER TABLE sellers ADD COLUMN vat_id text;
