-- WA-1497 bound the size of a message body. NOT VALID: new writes are checked.
ALTER TABLE wa_messages ADD CONSTRAINT wa_messages_body_check
    CHECK ({{fault.s7}}) NOT VALID;
