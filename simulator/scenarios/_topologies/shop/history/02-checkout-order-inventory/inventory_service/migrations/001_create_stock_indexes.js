// inventory.stock: one document per SKU.
db.getSiblingDB("inventory").stock.createIndex({ sku: 1 }, { unique: true });
