-- WA-1433 a conversion reported from a chat keeps the message it came from.
ALTER TABLE conversion_events ADD COLUMN wa_message_id TEXT{{fault.s5}};
ALTER TABLE conversion_events ADD CONSTRAINT conversion_events_wa_message_id_fkey
    FOREIGN KEY (wa_message_id) REFERENCES wa_messages (message_id) NOT VALID;
