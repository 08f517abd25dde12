-- Localised e-mails need the customer's locale.
ALTER TABLE users ADD COLUMN locale text NOT NULL DEFAULT 'en-GB';
