-- WA-1490 locale is a WhatsApp language code such as pt_BR. NOT VALID: new writes are checked.
ALTER TABLE wa_users ADD CONSTRAINT wa_users_locale_check
    CHECK (locale ~ '{{fault.s6}}') NOT VALID;
