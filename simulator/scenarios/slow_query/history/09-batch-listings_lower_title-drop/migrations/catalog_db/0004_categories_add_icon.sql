-- catalog-db 0004_categories_add_icon
ALTER TABLE categories ADD COLUMN icon text;
