// Documents imported from the legacy system have no "reserved" counter.
db.getSiblingDB("inventory").stock.updateMany(
  { reserved: { $exists: false } },
  { $set: { reserved: 0 } }
);
