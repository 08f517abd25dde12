-- ADS-2352 advertiser accounts: an ad belongs to the account that pays for it.
CREATE TABLE ad_accounts (
    account_id    TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    currency      CHAR(3) NOT NULL
);

ALTER TABLE ads ADD COLUMN account_id TEXT{{fault.s5}};
ALTER TABLE ads ADD CONSTRAINT ads_account_id_fkey
    FOREIGN KEY (account_id) REFERENCES ad_accounts (account_id) NOT VALID;
