-- WA-1466 only the statuses WhatsApp reports. NOT VALID: new writes are checked.
ALTER TABLE wa_messages ADD CONSTRAINT wa_messages_status_check
    CHECK (status IN ({{fault.s7}}'sent', 'delivered', 'read', 'failed')) NOT VALID;
