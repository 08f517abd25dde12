-- WA-1471 where a user's marketing opt-in came from (chat, web_form, import).
ALTER TABLE wa_users ADD COLUMN consent_source TEXT;
UPDATE wa_users SET consent_source = 'import' WHERE consent_source IS NULL;{{fault.s7}}
