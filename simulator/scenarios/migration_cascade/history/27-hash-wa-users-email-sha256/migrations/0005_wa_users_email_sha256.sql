-- WA-1494 SHA-256 of the e-mail, for custom-audience matching.
ALTER TABLE wa_users ADD COLUMN email_sha256 TEXT;
UPDATE wa_users SET email_sha256 = encode(sha256(lower(email)::bytea), 'hex')
    WHERE email_sha256 IS NULL;{{fault.s5}}
